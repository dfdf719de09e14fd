/**
 * Following a queue's events stream as it grows (docs/design.md, "Subscribing"): `Queue.events`,
 * `Queue.eventEntries` and `Queue.waitFor` read through here.
 *
 * On a transport that can park (Node's, `xread`), every subscriber of a queue shares one reader
 * per transport: one XREAD BLOCK on a connection of its own, however many iterators, waiters and
 * SSE clients, each entry decoded once and handed to all. A subscriber joins it in three steps:
 * it registers (from then on the reader hands it every entry it reads), catches up from its own
 * position with readEvents, and then takes what the reader handed it past that position. One that
 * falls more than BEHIND entries behind is dropped back to catching up, so a slow reader costs
 * reads, not memory. On one that cannot park (Upstash, the Worker) each subscriber reads with
 * readEvents on its own every `pollMs` (default EVENTS_POLL_MS: 60 requests a minute while idle),
 * shared by nothing: an edge isolate must not carry one request's reads into another.
 */
import { type QueueEvent } from './events.js';
import { decodeEntry } from './decode.js';
import { sleep, startTimer, type Timer } from '../timers.js';
import type { StreamEntry, Transport } from '../transport.js';

/** How often a subscriber on a transport that cannot park reads the stream when it had nothing new, in ms. */
export const EVENTS_POLL_MS = 1000;
/**
 * How long the shared reader stays parked after its last subscriber left, in ms: waits one after
 * another (a producer's addAndWait in a loop) reuse its connection instead of opening one each.
 */
const LINGER_MS = 2_000;
/** How long one XREAD BLOCK of the shared reader parks before it is sent again, in ms. */
const PARK_MS = 10_000;
/** Entries one read of the shared reader takes at most. */
const READ_COUNT = 100;
/** Events a catch-up page holds at most (readEvents' limit): whole entries, at least one. */
const PAGE_EVENTS = 1000;
/** The most events one entry holds (lua/includes/flush_events.lua). */
const ENTRY_EVENTS_MAX = 500;
/**
 * A page holding at most this many events reached the stream's end when it was read: one more
 * entry, of at most ENTRY_EVENTS_MAX events, would have fit in it.
 */
const PAGE_WHOLE_EVENTS = PAGE_EVENTS - ENTRY_EVENTS_MAX;
/** Entries a live subscriber may have unread before it is dropped back to catching up. */
const BEHIND = 1000;

/** One entry of the stream: the events of one script call, sharing its id. */
export interface EventBatch {
  /** The entry id, `<ms>-<seq>`: pass it as `after` to go on after this entry. */
  readonly id: string;
  /** Its events in order (an event this version does not know is left out: there may be none). */
  readonly events: QueueEvent[];
}

const ID = /^(\d+)-(\d+)$/;

/** Orders two entry ids (`'0'` first): negative, zero or positive, as `a` is before, at or after `b`. */
export function compareEventIds(a: string, b: string): number {
  const [, am = '0', as = '0'] = ID.exec(a) ?? [];
  const [, bm = '0', bs = '0'] = ID.exec(b) ?? [];
  const ms = BigInt(am) - BigInt(bm);
  const diff = ms !== 0n ? ms : BigInt(as) - BigInt(bs);
  return diff < 0n ? -1 : diff > 0n ? 1 : 0;
}

const decode = (entry: StreamEntry): EventBatch => ({ id: entry.id, events: decodeEntry(entry.id, entry.fields).events });

/** One subscriber of a shared reader: what it was handed and not yet taken. */
class Subscriber {
  buffer: EventBatch[] = [];
  /** Set when it fell BEHIND entries behind: the buffer was dropped, it catches up again. */
  behind = false;
  failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  push(batch: EventBatch): void {
    if (!this.behind && this.buffer.length >= BEHIND) {
      this.behind = true;
      this.buffer = [];
    }
    if (!this.behind) this.buffer.push(batch);
    this.wake?.();
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.wake?.();
  }

  /** Resolves when something was handed over, the reader failed, or `signal` aborted. */
  next(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.wake = undefined;
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.wake = done;
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * What a subscription reads through: one queue's stream on one transport (Queue fills it in from
 * its scripts gateway, which stays private to it).
 */
export interface EventSource {
  /** The transport: subscribers share a reader per transport and queue. */
  readonly transport: Transport;
  /** The queue's name. */
  readonly queue: string;
  /** Whether `park` is there: the transport can hold XREAD BLOCK. */
  readonly canPark: boolean;
  /** Whole entries after `after` while their events fit in `limit`, at least one (readEvents). */
  page(after: string, limit: number): Promise<StreamEntry[]>;
  /** At most `count` entries after `after`, parked up to `blockMs` for the first; [] at the timeout or on abort. */
  park(after: string, count: number, blockMs: number, signal: AbortSignal): Promise<StreamEntry[]>;
}

/** The one reader of a queue's stream on one transport, parked on XREAD BLOCK while it has subscribers. */
class SharedReader {
  /** The entry id it started after, once a subscriber has caught up and started it. */
  start: string | undefined;
  /**
   * The last entry it handed over (`start` until it read one): every entry after it goes to the
   * subscribers present when it is read. Undefined until started, and once it stopped.
   */
  tail: string | undefined;
  private readonly subscribers = new Set<Subscriber>();
  private readonly stop = new AbortController();
  private linger: Timer | undefined;

  constructor(
    private readonly source: EventSource,
    private readonly forget: () => void,
  ) {}

  join(subscriber: Subscriber): void {
    this.linger?.cancel();
    this.linger = undefined;
    this.subscribers.add(subscriber);
  }

  /**
   * The last subscriber to leave stops it LINGER_MS later unless another joins meanwhile: its
   * parked read ends and its connection is dropped. A reader that never started stops at once.
   */
  leave(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size > 0) return;
    if (this.start === undefined) return this.end();
    this.linger?.cancel();
    // the parked read does not keep a process alive that has nothing else to do for it
    this.linger = startTimer(
      () => {
        if (this.subscribers.size === 0) this.end();
      },
      LINGER_MS,
      { unref: true },
    );
  }

  private end(): void {
    this.tail = undefined;
    this.linger?.cancel();
    this.forget();
    this.stop.abort();
  }

  /** Starts reading after `at` (the first subscriber's position once it caught up). */
  begin(at: string): void {
    this.start = at;
    this.tail = at;
    void this.run(at);
  }

  private async run(after: string): Promise<void> {
    let tail = after;
    try {
      for (;;) {
        // called even once stopped: an aborted read drops the connection it parked on
        const entries = await this.source.park(tail, READ_COUNT, PARK_MS, this.stop.signal);
        if (this.stop.signal.aborted) return;
        for (const entry of entries) {
          tail = this.tail = entry.id;
          const batch = decode(entry);
          for (const subscriber of this.subscribers) subscriber.push(batch);
        }
      }
    } catch (error) {
      // every subscriber sees the failure; the next one to subscribe starts a new reader
      this.tail = undefined;
      this.forget();
      this.stop.abort();
      for (const subscriber of this.subscribers) subscriber.fail(error);
    }
  }
}

/** The shared readers, per transport and queue name. */
const readers = new WeakMap<Transport, Map<string, SharedReader>>();

function sharedReader(source: EventSource): SharedReader {
  let byQueue = readers.get(source.transport);
  if (!byQueue) readers.set(source.transport, (byQueue = new Map()));
  const name = source.queue;
  let reader = byQueue.get(name);
  if (!reader) {
    const queues = byQueue;
    const made: SharedReader = new SharedReader(source, () => {
      if (queues.get(name) === made) queues.delete(name);
    });
    byQueue.set(name, (reader = made));
  }
  return reader;
}

/**
 * A subscriber that joined its queue's shared reader before it knew where to read from: a waiter
 * joins, then reads the stream's position (with the enqueue of the job it waits for, in one round
 * trip), then follows from there (`BatchOptions.joined`). When the reader was running at the join
 * and had handed over nothing past that position, everything after it reaches the subscriber, so
 * it skips the catch-up read. `leave` (once; the subscription leaves it when it ends) lets go of
 * one that was never followed.
 */
export interface JoinedReader {
  leave(): void;
}

/** What JoinedReader stands for, kept inside this module. */
interface Joined extends JoinedReader {
  readonly reader: SharedReader;
  readonly subscriber: Subscriber;
  /** The reader's tail at the join: undefined when it was not running. */
  readonly tail: string | undefined;
}

const joinedReaders = new WeakMap<JoinedReader, Joined>();

/** Joins `source`'s shared reader now (see JoinedReader); undefined on a transport that cannot park. */
export function joinReader(source: EventSource): JoinedReader | undefined {
  if (!source.canPark) return undefined;
  const reader = sharedReader(source);
  const subscriber = new Subscriber();
  reader.join(subscriber);
  let left = false;
  const joined: Joined = {
    reader,
    subscriber,
    tail: reader.tail,
    leave: () => {
      if (left) return;
      left = true;
      reader.leave(subscriber);
    },
  };
  joinedReaders.set(joined, joined);
  return joined;
}

/** How a subscription reads: where from, until when, and (on a transport that cannot park) how often. */
export interface BatchOptions {
  /** The entry id to read after (exclusive), `'0'` from the start. */
  readonly after: string;
  /** Ends the subscription (between two entries). */
  readonly signal?: AbortSignal | undefined;
  /** The interval of the reads on a transport that cannot park, in ms. */
  readonly pollMs: number;
  /** Joined before `after` was read (joinReader): the subscription follows it, and leaves it when it ends. */
  readonly joined?: JoinedReader | undefined;
}

/**
 * The stream's entries after `after`, each once and in order, for as long as the caller takes
 * them: it ends when `signal` aborts (or the caller stops iterating), closing what it opened, and
 * throws when Redis fails.
 */
export async function* eventBatches(source: EventSource, options: BatchOptions): AsyncGenerator<EventBatch, void, undefined> {
  const { signal, pollMs } = options;
  let cursor = options.after;
  /** The events the last page held as written, those this version does not decode included. */
  let pageEvents = 0;
  const page = async (): Promise<EventBatch[]> => {
    pageEvents = 0;
    return (await source.page(cursor, PAGE_EVENTS)).map((entry) => {
      const { events, skipped } = decodeEntry(entry.id, entry.fields);
      pageEvents += events.length + skipped;
      return { id: entry.id, events };
    });
  };

  if (!source.canPark) {
    for (;;) {
      if (signal?.aborted) return;
      const batches = await page();
      for (const batch of batches) {
        cursor = batch.id;
        yield batch;
      }
      // read again at once after a page that held something: events come in runs (a job's
      // added, active and completed), and the next may be there already
      if (batches.length === 0) await sleep(pollMs, { signal });
    }
  }

  const joined = options.joined ? joinedReaders.get(options.joined) : undefined;
  const reader = joined?.reader ?? sharedReader(source);
  const subscriber = joined?.subscriber ?? new Subscriber();
  if (!joined) reader.join(subscriber);
  // joined while running, at or before our position: all past it is handed to us, no catch-up
  let caughtUp = joined?.tail !== undefined && compareEventIds(joined.tail, cursor) <= 0;
  try {
    for (;;) {
      // catch up: read until a page reaches the stream's end (one that could not have held more,
      // or an empty one), and we stand at or past where the shared reader started (a read that
      // reached the end just before it started may have missed what it started after: read once
      // more). The reader was joined first: what it reads from then on is handed to us, and it
      // reads on from no later than the end of the stream when our page was read
      let readAgain = true;
      for (;;) {
        if (caughtUp) {
          caughtUp = false;
          break;
        }
        if (signal?.aborted) return;
        const batches = await page();
        for (const batch of batches) {
          cursor = batch.id;
          yield batch;
        }
        // a page that may have stopped short of the end: read on
        if (pageEvents > PAGE_WHOLE_EVENTS) continue;
        if (reader.start === undefined) reader.begin(cursor);
        else if (compareEventIds(cursor, reader.start) < 0 && readAgain) {
          readAgain = false;
          continue;
        }
        break;
      }
      // live: what the reader handed over, past our position
      for (;;) {
        if (subscriber.failure) throw subscriber.failure.error;
        if (subscriber.behind) {
          subscriber.behind = false;
          break;
        }
        const batch = subscriber.buffer.shift();
        if (batch) {
          if (compareEventIds(batch.id, cursor) > 0) {
            cursor = batch.id;
            yield batch;
          }
          continue;
        }
        if (signal?.aborted) return;
        await subscriber.next(signal);
      }
    }
  } finally {
    if (joined) joined.leave();
    else reader.leave(subscriber);
  }
}
