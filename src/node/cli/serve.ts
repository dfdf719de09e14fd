import { type ServerType, serve } from '@hono/node-server';
import { type AppOptions, createApp, NODE_STREAMING } from '../../http/app.js';
import type { Transport } from '../../transport.js';

/** A running HTTP API on Node. */
export interface ApiServer {
  /** Where it listens, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  /** The port it listens on (the one picked, when asked for 0). */
  readonly port: number;
  /** Whether the API is open (no EMQ_TOKEN): then it listens on loopback only. */
  readonly open: boolean;
  /**
   * Stops listening: idle connections close at once, requests in flight get CLOSE_GRACE_MS to
   * finish, and what still holds a connection then (an SSE stream, a `?wait`) is cut: an
   * EventSource reconnects, a wait sent again answers the same. The transport stays open: it is
   * the caller's.
   */
  close(): Promise<void>;
}

/** How long a closing server lets requests in flight finish before it cuts their connections (ms). */
export const CLOSE_GRACE_MS = 2_000;

/** Options of serveApi. */
export interface ServeApiOptions extends Omit<AppOptions, 'transport' | 'token'> {
  /** The transport every request runs on (one for the process). */
  readonly transport: Transport;
  /** The bearer token (EMQ_TOKEN). Without one the API is open and binds 127.0.0.1 only. */
  readonly token?: string;
  /** The port (default 8787; 0 picks a free one). */
  readonly port?: number;
  /** The address to bind when a token is set (default 0.0.0.0). */
  readonly host?: string;
}

/**
 * Serves the HTTP API (the same hono app the Worker serves) with @hono/node-server.
 *
 * @example
 * const api = await serveApi({ transport: IoredisTransport.connect(url), token: process.env.EMQ_TOKEN });
 * console.log(`listening on ${api.url}`);
 */
export async function serveApi(options: ServeApiOptions): Promise<ApiServer> {
  const { transport, token, port = 8787, host, ...appOptions } = options;
  const open = token === undefined || token === '';
  // Node holds a connection open: SSE clients and waiters park on the queue's one shared XREAD BLOCK
  const app = createApp({ streaming: NODE_STREAMING, ...appOptions, transport: () => transport, token: () => (open ? undefined : token) });
  const hostname = open ? '127.0.0.1' : (host ?? '0.0.0.0');
  const { server, boundPort } = await new Promise<{ server: ServerType; boundPort: number }>((resolve, reject) => {
    // overrideGlobalObjects: the API may run inside another program, whose globals stay its own
    const server = serve({ fetch: app.fetch, port, hostname, overrideGlobalObjects: false }, (info) => resolve({ server, boundPort: info.port }));
    server.once('error', reject);
  });
  return {
    url: `http://${hostname === '0.0.0.0' ? '127.0.0.1' : hostname}:${boundPort}`,
    port: boundPort,
    open,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // a stream parked on the queue's XREAD holds its connection until its own end (minutes):
        // bounded, so a SIGTERM or a test's close never waits on a client that went away
        const cut = 'closeAllConnections' in server ? setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS) : undefined;
        server.close((error) => {
          clearTimeout(cut);
          if (error) reject(error);
          else resolve();
        });
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }),
  };
}
