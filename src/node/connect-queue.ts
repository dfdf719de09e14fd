import { Queue, type QueueOptions } from '../queue/queue.js';
import { IoredisTransport } from './ioredis-transport.js';

/** connectQueue's options: the Queue's, and how long a request waits for a connection. */
export interface ConnectQueueOptions extends Omit<QueueOptions, 'ownsTransport'> {
  /** How long a request waits for a connection before it fails with ConnectionError (ms; default 5,000). */
  readonly connectTimeoutMs?: number;
}

/**
 * A Queue on a connection of its own to `url` (ioredis), closed by the Queue's close() or at the
 * end of an `await using` block. A request waits for a connection at most `connectTimeoutMs`,
 * then fails with ConnectionError naming the URL (never its password) and the cause.
 *
 * A function of echomq/node rather than a static `Queue.connect`: the core Queue runs in a Worker
 * too and never imports ioredis (docs/design.md, "Connecting, closing, and a Redis that cannot
 * be reached").
 *
 * @example
 * import { connectQueue } from 'echomq/node';
 *
 * await using mail = connectQueue<{ to: string }>(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'mail');
 * await mail.add({ to: 'a@example.com' });
 */
export function connectQueue<Payload = unknown>(url: string, name: string, options: ConnectQueueOptions = {}): Queue<Payload> {
  const { connectTimeoutMs, ...queueOptions } = options;
  const transport = IoredisTransport.connect(url, connectTimeoutMs === undefined ? {} : { connectTimeoutMs });
  try {
    return new Queue<Payload>(transport, name, { ...queueOptions, ownsTransport: true });
  } catch (error) {
    // a bad name or option: nothing may be left open
    void transport.close();
    throw error;
  }
}
