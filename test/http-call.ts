/** A running API to test: the Node server or the Worker under miniflare. */
export interface ApiTarget {
  readonly baseUrl: string;
  /** The bearer token it requires, if any. */
  readonly token?: string;
  close(): Promise<void>;
}

/** An HTTP answer of the API: its status and its JSON body ({} for none). */
export interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
}

/**
 * One request to `target` (with its bearer token when it has one): `body` as JSON, or `rawBody` as
 * it is (a malformed body), answered with its status and parsed body.
 */
export async function callApi(target: ApiTarget, method: string, path: string, body?: unknown, rawBody?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (target.token) headers.Authorization = `Bearer ${target.token}`;
  if (body !== undefined || rawBody !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(target.baseUrl + path, {
    method,
    headers,
    ...(rawBody !== undefined ? { body: rawBody } : body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Answer['body'] };
}
