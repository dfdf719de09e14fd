import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { HonoAdapter } from '@bull-board/hono';
import { serve } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { EchoMQAdapter } from '../../src/bull-board/index.js';
import { createApp } from '../../src/http/index.js';
import type { QueueSurface } from '../../src/queue/surface.js';
import type { Transport } from '../../src/transport.js';

/** The board and the API on one loopback server. */
export interface BoardApp {
  /** `http://127.0.0.1:<port>`: the API at `/v1/...`, the board at `/board`. */
  readonly url: string;
  /** Stops the server. */
  close(): Promise<void>;
}

/**
 * One hono app on loopback, as an app of yours would serve it: the project's HTTP API (open: no
 * token, loopback only) and, at `/board`, `createBullBoard` from `@bull-board/hono` with one
 * EchoMQAdapter per queue.
 *
 * @example
 * const app = await startBoardApp(transport, [queue]);
 * await fetch(`${app.url}/v1/queues`);
 */
export async function startBoardApp(transport: Transport, queues: ReadonlyArray<QueueSurface<unknown>>): Promise<BoardApp> {
  const serverAdapter = new HonoAdapter(serveStatic).setBasePath('/board');
  createBullBoard({ queues: queues.map((q) => new EchoMQAdapter(q)), serverAdapter });
  const app = new Hono();
  app.route('/board', serverAdapter.registerPlugin());
  app.route('/', createApp({ transport: () => transport, log: () => {}, dashboard: false }));
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
