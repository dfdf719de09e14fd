import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The faults a FaultProxy injects, each with the share of requests it hits (0..1). */
export interface FaultRates {
  /** Answer 500 without forwarding: nothing ran. */
  readonly error500?: number;
  /** Forward, let Redis run it, then cut the connection before the reply: it ran, the caller cannot know. */
  readonly dropReply?: number;
  /** Hold the request `stallMs` before forwarding it. */
  readonly stall?: number;
  /** Cut the connection without forwarding: nothing ran. */
  readonly reset?: number;
}

/** Options of a FaultProxy. */
export interface FaultProxyOptions {
  /** Where requests go when no fault stops them (an Upstash-REST endpoint: `emq bridge`). */
  readonly target: string;
  readonly faults: FaultRates;
  /** How long a stalled request is held (ms, default 3,000). */
  readonly stallMs?: number;
  /** The seed of the faults' random sequence, so a run can be repeated (default 1). */
  readonly seed?: number;
  /** The loopback port (default: a free one). */
  readonly port?: number;
  /** Called with each fault injected, so a run can tell which request (and job) met which fault. */
  readonly onFault?: (fault: InjectedFault) => void;
}

/** The kinds of fault a FaultProxy injects. */
export type FaultKind = 'error500' | 'dropReply' | 'stall' | 'reset';

/** One fault injected: its kind, when its request arrived, the request's body, and the reply Redis gave when the request ran. */
export interface InjectedFault {
  readonly kind: FaultKind;
  /** When the request reached the proxy (`Date.now()`). */
  readonly at: number;
  readonly request: string;
  /** The reply the caller never saw (`dropReply`) or saw late (`stall`); absent when nothing ran. */
  readonly reply?: string;
}

/** What a FaultProxy did, request by request. */
export interface FaultCounts {
  requests: number;
  forwarded: number;
  error500: number;
  dropReply: number;
  stall: number;
  reset: number;
}

/** A running FaultProxy. */
export interface RunningFaultProxy {
  /** The proxy's URL, to give clients in place of the target's. */
  readonly url: string;
  counts(): FaultCounts;
  /** Changes the rates from now on (zero them to let a run drain cleanly). */
  setFaults(faults: FaultRates): void;
  close(): Promise<void>;
}

/** A small seeded generator (mulberry32): the same seed gives the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/**
 * An HTTP proxy for fault injection on loopback, in front of `emq bridge`: the lossy network
 * between a Worker and Upstash, made on purpose. Each request meets at most one fault, drawn from
 * a seeded sequence: a 500 before anything ran, a reply dropped after Redis ran the request, a
 * stall, or a reset connection. `npm run chaos` runs the edge path through it.
 *
 * @example
 * const proxy = await startFaultProxy({ target: bridge.url, faults: { dropReply: 0.1, reset: 0.1 } });
 * const transport = UpstashTransport.connect({ url: proxy.url, token });
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<RunningFaultProxy> {
  const next = seededRandom(options.seed ?? 1);
  const stallMs = options.stallMs ?? 3_000;
  let faults = options.faults;
  const counts: FaultCounts = { requests: 0, forwarded: 0, error500: 0, dropReply: 0, stall: 0, reset: 0 };
  const target = options.target.replace(/\/$/, '');

  const forward = async (req: IncomingMessage, body: Buffer): Promise<Response> => {
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'content-type', 'upstash-encoding']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    counts.forwarded++;
    return fetch(`${target}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, ...(body.length > 0 ? { body } : {}) });
  };

  const reply = async (res: ServerResponse, answer: Response): Promise<Buffer> => {
    const text = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(text);
    return text;
  };
  const report = (kind: FaultKind, at: number, request: Buffer, answer?: Buffer): void =>
    options.onFault?.({ kind, at, request: request.toString(), ...(answer ? { reply: answer.toString() } : {}) });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    counts.requests++;
    const at = Date.now();
    const body = await readBody(req);
    const draw = next();
    const { error500 = 0, dropReply = 0, stall = 0, reset = 0 } = faults;
    if (draw < error500) {
      counts.error500++;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'injected: 500 before the request ran' }));
      report('error500', at, body);
    } else if (draw < error500 + reset) {
      counts.reset++;
      req.socket.destroy();
      report('reset', at, body);
    } else if (draw < error500 + reset + dropReply) {
      counts.dropReply++;
      const dropped = Buffer.from(await (await forward(req, body)).arrayBuffer());
      req.socket.destroy();
      report('dropReply', at, body, dropped);
    } else if (draw < error500 + reset + dropReply + stall) {
      counts.stall++;
      await new Promise((resolve) => setTimeout(resolve, stallMs));
      report('stall', at, body, await reply(res, await forward(req, body)));
    } else {
      await reply(res, await forward(req, body));
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    setFaults: (rates) => {
      faults = rates;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
