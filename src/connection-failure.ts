import { ConnectionError, type ConnectionFailure } from './errors.js';

/**
 * How both transports say that Redis could not be reached: which kind of cause an error is, and
 * the one message format (`cannot reach Redis at <url>[ within <ms> ms]: <cause> (<detail>)`),
 * so a log line reads the same whichever runtime wrote it. Runtime-free: errors are read by their
 * `code`, `name` and message, never by class.
 */

/** Error codes (Node's, OpenSSL's) by the failure they mean. */
const BY_CODE: ReadonlyArray<[RegExp, ConnectionFailure]> = [
  [/^ECONNREFUSED$/, 'refused'],
  [/^(ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL|EAI_NODATA)$/, 'dns'],
  [/^(ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT)$/, 'timeout'],
  [/^(ERR_SSL_|ERR_TLS_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|HOSTNAME_MISMATCH$)/, 'tls'],
  [/^(ECONNRESET|EPIPE|ECONNABORTED|EHOSTUNREACH|ENETUNREACH|ENETDOWN|UND_ERR_SOCKET)$/, 'lost'],
];

/** Messages by the failure they mean, for errors that carry no code (Redis replies, ioredis's own). */
const BY_MESSAGE: ReadonlyArray<[RegExp, ConnectionFailure]> = [
  [/^(NOAUTH|WRONGPASS)|^ERR (invalid password|AUTH )|invalid username-password/i, 'auth'],
  [/SSL routines|self[- ]signed certificate|certificate has expired|wrong version number/i, 'tls'],
  [/^(Connection is closed|Socket closed unexpectedly|Command aborted due to connection close|Reached the max retries per request limit)/, 'lost'],
  // a Redis Cluster's: a master unreachable (failing over), the cluster not serving every slot
  // yet, no node reachable to learn the cluster from
  [/^(Too many Cluster redirections|CLUSTERDOWN )/, 'lost'],
  [/^(None of startup nodes is available|Failed to refresh slots cache)/, 'refused'],
];

const codeOf = (error: Error): string => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
};

/**
 * The kind of connection failure `error` is (or its `cause`, as fetch wraps a refused socket), or
 * undefined when it is none: a reply Redis sent, say.
 *
 * @example
 * failureOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })); // 'refused'
 */
export function failureOf(error: unknown): ConnectionFailure | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof ConnectionError) return e.reason;
    const code = codeOf(e);
    for (const [pattern, failure] of BY_CODE) if (code && pattern.test(code)) return failure;
    if (e.name === 'TimeoutError') return 'timeout';
    for (const [pattern, failure] of BY_MESSAGE) if (pattern.test(e.message)) return failure;
  }
  return undefined;
}

/** The words for each failure in a message. */
const WORDS: Record<ConnectionFailure, string> = {
  refused: 'connection refused',
  dns: 'host name not found',
  auth: 'authentication failed',
  tls: 'TLS failed',
  timeout: 'no answer',
  lost: 'connection lost',
  closed: 'the connection is closed',
};

/**
 * What an error says, as the detail of a ConnectionError's message: its first line (and its
 * cause's, as fetch keeps the reason there), its code first when the message lacks it.
 *
 * @example
 * describeCause(new Error('connect ECONNREFUSED 127.0.0.1:1')); // 'connect ECONNREFUSED 127.0.0.1:1'
 */
export function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return error === undefined ? '' : String(error);
  let text = error.message.split('\n')[0]!.trim();
  // fetch says "fetch failed" and keeps the reason (connect ECONNREFUSED ...) in its cause
  if (error.cause instanceof Error && error.cause.message) text = `${text}: ${error.cause.message.split('\n')[0]!.trim()}`;
  const code = codeOf(error);
  if (code && !text.includes(code)) text = `${code}: ${text}`;
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

/** What connectionError needs besides the URL and the failure. */
export interface ConnectionErrorDetails {
  /** The error that showed it (its first line goes in the message). */
  readonly cause?: unknown;
  /** The request waited this long for a connection. */
  readonly withinMs?: number;
  /** A connection had been made and was lost before this failure. */
  readonly wasConnected?: boolean;
  /** Words in place of the cause's message, when the cause has none to give. */
  readonly detail?: string;
}

/**
 * The ConnectionError for `failure` at `url` (already without credentials: see redactUrl).
 *
 * @example
 * connectionError('redis://127.0.0.1:1', 'refused', { cause, withinMs: 5000 }).message;
 * // "cannot reach Redis at redis://127.0.0.1:1 within 5000 ms: connection refused (connect ECONNREFUSED 127.0.0.1:1)"
 */
export function connectionError(url: string, failure: ConnectionFailure, details: ConnectionErrorDetails = {}): ConnectionError {
  const detail = details.detail ?? describeCause(details.cause);
  const words = details.wasConnected && failure !== 'lost' && failure !== 'closed' ? `connection lost, then ${WORDS[failure]}` : WORDS[failure];
  const within = details.withinMs === undefined ? '' : ` within ${details.withinMs} ms`;
  return new ConnectionError(`cannot reach Redis at ${url}${within}: ${words}${detail ? ` (${detail})` : ''}`, {
    url,
    reason: failure,
    ...(details.cause === undefined ? {} : { cause: details.cause }),
  });
}

/**
 * A Redis URL fit for a message or a log line: a password becomes `***`, the query string (where
 * some clients take a password) goes. Anything that does not parse as a URL is named by its
 * scheme alone.
 *
 * @example
 * redactUrl('redis://app:s3cret@redis.internal:6379/2'); // 'redis://app:***@redis.internal:6379/2'
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'the Redis URL';
  }
  const user = parsed.username;
  const auth = parsed.password ? `${user}:***@` : user ? `${user}@` : '';
  const path = parsed.pathname === '/' ? '' : parsed.pathname;
  return `${parsed.protocol}//${auth}${parsed.host}${path}`;
}
