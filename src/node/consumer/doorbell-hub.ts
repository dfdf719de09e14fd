import { Cluster, type Redis } from 'ioredis';
import { InvalidArgumentError } from '../../errors.js';
import { sleep } from '../../timers.js';
import type { BlockingTransport } from '../../transport.js';
import { IoredisTransport } from '../ioredis-transport.js';
import type { BellKind, PartitionBell } from './partition-bell.js';

/**
 * The doorbells of a partitioned queue's partitions, and the cancel channels of a consumer's
 * queue (or of each partition), heard on ONE subscriber connection per master (a single Redis:
 * one): each partition's scripts SPUBLISH `wake` or `sched` on its doorbell key
 * (lua/includes/publish_bell.lua), and the hub rings that partition's PartitionBell; lua/cancel.lua
 * SPUBLISHes `<id> <reason>` on `emq:{q}:cancel` when a running job's cancel is asked, and the hub
 * tells that channel's listener (its Loop's cancelAsked). A cancel asked before the subscription
 * was made, or while it was down, is told by the renewal every (re)subscription asks of the loops
 * (`subscribed`: Loop.listening). Over a
 * cluster it is a duplicate of the consumer's cluster client with `shardedSubscribers`, which
 * keeps one SSUBSCRIBE connection per master serving a partition and moves it after a failover.
 * After the subscription is (re)made it rings every bell, wake and sched both: a message may have
 * been missed while it was down, and a spurious ring costs one claim. Otherwise a park never waits
 * longer than the beat, so nothing is lost meanwhile, at worst late.
 *
 * @example
 * const hub = new DoorbellHub(transport, 'mail', bells);
 * hub.open();
 * // ... the loops park on their bells
 * await hub.close();
 */
export class DoorbellHub {
  private readonly client: IoredisTransport['redis'];
  private readonly byChannel: ReadonlyMap<string, PartitionBell>;
  private subscriber: Redis | Cluster | undefined;

  /** Throws InvalidArgumentError unless `transport` is an IoredisTransport: the hub needs its client. */
  constructor(
    transport: BlockingTransport,
    /** The partitioned queue's name: the subscriber connections are named after it (CLIENT LIST). */
    private readonly queue: string,
    bells: readonly PartitionBell[],
    /** Each cancel channel (`emq:{q}:cancel`) and who is told of a job's cancel heard on it. */
    private readonly cancels: ReadonlyMap<string, (id: string, reason: string) => void> = new Map(),
    /** Told each time the subscription is (re)made: a cancel asked before may have been missed. */
    private readonly subscribed: () => void = () => {},
  ) {
    if (!(transport instanceof IoredisTransport)) {
      throw new InvalidArgumentError(
        `a consumer of a partitioned queue hears its doorbells by sharded pub/sub on an ioredis connection: give it an IoredisTransport, got ${transport.constructor.name}`,
      );
    }
    this.client = transport.redis;
    this.byChannel = new Map(bells.map((bell) => [bell.wakeKey, bell]));
  }

  /** The name its subscriber connections carry (a cluster's: ioredis's prefix, then this). */
  get connectionName(): string {
    return `emq-doorbell:${this.queue}`;
  }

  /** Opens the subscriber connection(s) and subscribes to every partition's doorbell; returns at once. */
  open(): void {
    if (this.subscriber) return;
    const hear = (channel: string, message: string): void => {
      if (message === 'wake' || message === 'sched') this.byChannel.get(channel)?.ring(message satisfies BellKind);
      else {
        const space = message.indexOf(' ');
        if (space > 0) this.cancels.get(channel)?.(message.slice(0, space), message.slice(space + 1));
      }
    };
    const channels = [...this.byChannel.keys(), ...this.cancels.keys()];
    if (this.client instanceof Cluster) {
      const cluster = this.client.duplicate([], {
        shardedSubscribers: true,
        redisOptions: { ...this.client.options.redisOptions, connectionName: this.connectionName, maxRetriesPerRequest: null },
      });
      this.subscriber = cluster;
      cluster.on('error', () => {});
      cluster.on('smessage', hear);
      // a subscriber replaced (its master failed over, or it was lost) has been subscribed again
      cluster.on('subscribersReady', () => this.ringAll());
      // one channel a command: each is in a slot of its own, and a cluster refuses CROSSSLOT
      void Promise.all(channels.map((channel) => cluster.ssubscribe(channel))).then(
        () => this.ringAll(),
        () => {},
      );
      return;
    }
    const redis = this.client.duplicate({
      connectionName: this.connectionName,
      lazyConnect: true,
      // subscribed again by us on each 'ready' below (and then every bell rung), not by ioredis
      autoResubscribe: false,
      maxRetriesPerRequest: null,
    });
    this.subscriber = redis;
    redis.on('error', () => {});
    redis.on('smessage', hear);
    redis.on('ready', () => {
      // one command for all: a Redis without cluster mode does not check the channels' slots
      redis.ssubscribe(...channels).then(
        () => this.ringAll(),
        () => {},
      );
    });
    redis.connect().catch(() => {});
  }

  /** Closes the subscriber connection(s); resolves once they are closed. */
  async close(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (!subscriber || subscriber.status === 'end') return;
    const ended = new Promise<void>((resolve) => subscriber.once('end', () => resolve()));
    subscriber.disconnect();
    const closing = new AbortController();
    await Promise.race([ended, sleep(1_000, { signal: closing.signal })]);
    closing.abort();
  }

  private ringAll(): void {
    if (!this.subscriber) return;
    this.subscribed();
    for (const bell of this.byChannel.values()) {
      bell.ring('wake');
      bell.ring('sched');
    }
  }
}
