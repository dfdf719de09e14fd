import { InvalidArgumentError, shown } from '../../errors.js';
import { Queue, type QueueOptions } from '../../queue.js';
import { IoredisTransport } from '../ioredis-transport.js';

/**
 * What `Consumer.connect` and `BatchConsumer.connect` take besides the consumer's options.
 *
 * @example
 * Consumer.connect(url, 'mail', handler, { connectTimeoutMs: 2_000, queue: { keepCompletedMs: 0 } });
 */
export interface ConnectOptions {
  /** How long a request waits for a connection before it fails with ConnectionError (ms; default 5,000). */
  readonly connectTimeoutMs?: number;
  /** Options of the Queue the consumer runs on. */
  readonly queue?: QueueOptions;
}

/**
 * A consumer on a connection of its own to `url`: the transport and the Queue are made here and
 * handed to `make`; if `make` throws (a bad option, a bad name), the connection is closed again.
 *
 * @example
 * connectConsumer(url, 'mail', options, (transport, queue) => new Consumer(transport, queue, handler, { ...options, ownsTransport: true }));
 */
export function connectConsumer<P, C>(
  url: string,
  queue: string,
  options: ConnectOptions,
  make: (transport: IoredisTransport, queue: Queue<P>) => C,
): C {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
  const transport = IoredisTransport.connect(url, options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs });
  try {
    return make(transport, new Queue<P>(transport, queue, options.queue));
  } catch (error) {
    void transport.close();
    throw error;
  }
}
