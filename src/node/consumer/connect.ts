import { InvalidArgumentError, shown } from '../../errors.js';
import { PartitionedQueue } from '../../partitions/partitioned-queue.js';
import type { QueueSurface } from '../../queue/surface.js';
import { Queue, type QueueOptions } from '../../queue/queue.js';
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
  readonly queue?: Omit<QueueOptions, 'partitions'>;
  /**
   * The queue is a partitioned one of this many partitions (a PartitionedQueue): the consumer
   * claims across them all (see ParkedConsumer). Default: a queue of one partition.
   *
   * @example
   * Consumer.connect(url, 'mail', handler, { partitions: 8, concurrency: 32 });
   */
  readonly partitions?: number;
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
  make: (transport: IoredisTransport, queue: QueueSurface<P>) => C,
): C {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
  const transport = IoredisTransport.connect(url, options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs });
  try {
    const { partitions } = options;
    const opened: QueueSurface<P> = partitions === undefined ? new Queue<P>(transport, queue, options.queue) : new PartitionedQueue<P>(transport, queue, { ...options.queue, partitions });
    return make(transport, opened);
  } catch (error) {
    void transport.close();
    throw error;
  }
}
