import { DEFAULT_MAX_RESULT_BYTES } from '../../encode.js';
import { type Durability, type DurabilityOptions, replicationOf } from '../../durability.js';
import { InvalidArgumentError, shown } from '../../errors.js';
import type { Replication } from '../../transport.js';
import type { ConsumerHooks } from './hooks.js';
import { MAX_SLOTS } from './slots.js';

/**
 * Options every parked consumer takes. Times are integer ms, at most 2^31 - 1 (the longest a
 * Node timer waits); a bad option throws InvalidArgumentError from the constructor.
 *
 * @example
 * new Consumer(transport, 'mail', handler, { leaseMs: 60_000, timeoutMs: 10_000 });
 */
export interface ParkedLoopOptions<Payload> extends DurabilityOptions {
  /** Lease per claim in ms, renewed while a job runs (default 30,000). */
  readonly leaseMs?: number;
  /**
   * The longest time between beats (reap, promote, claim) in ms (default 5,000): a parked
   * consumer's longest park, and a busy one's period (one of its requests is a beat).
   */
  readonly beatMs?: number;
  /** A handler running longer than this is aborted and retried (ms; default 0 = no timeout). */
  readonly timeoutMs?: number;
  /** How often leases are renewed (default a third of the lease). */
  readonly renewMs?: number;
  /** How long stop() waits for jobs in hand by default (ms; default 10,000). */
  readonly stopTimeoutMs?: number;
  /**
   * How many claimed jobs may wait in hand for a free slot, besides those running, so a slot that
   * frees starts its next job at once while the settle (and the claim behind it) is in flight.
   * Waiting jobs' leases are renewed like running ones'; stop() gives them back uncounted.
   * `'auto'` (default) prefetches while the recent handler durations (a moving average) stay
   * under 20 ms: as many jobs as the slots hold, or, when the slots run more than that during one
   * claim round trip (also a moving average), enough to cover it, at most 256 more. Once handlers take
   * longer it prefetches none, so a consumer with long jobs never hoards work another consumer
   * could run. A number fixes it (0: never; at most 1,000,000).
   *
   * @example
   * new Consumer(transport, 'thumbs', handler, { concurrency: 10, prefetch: 0 }); // no hoarding
   */
  readonly prefetch?: number | 'auto';
  /**
   * The largest handler result stored, in UTF-8 bytes of JSON (default: its queue's
   * `maxResultBytes`, 64 KiB unless set). A job whose handler resolves with more, or with
   * something JSON cannot carry, fails for good (dead) with an error saying why, rather than run
   * again.
   */
  readonly maxResultBytes?: number;
  /** What the consumer tells about the jobs it runs (started, completed, retried, dead, fenced, errors). */
  readonly hooks?: ConsumerHooks<Payload>;
  /**
   * Where the consumer says how its connection to Redis goes: connected, cannot connect, lost
   * (with the cause), back; one line each, never one per retry. Default: each line on stderr,
   * prefixed `[emq] `; `false`: nowhere; a function: yours to route (a logger, an alert).
   *
   * @example
   * Consumer.connect(url, 'mail', handler, { log: (line) => logger.warn(line) });
   */
  readonly log?: false | ((line: string) => void);
  /**
   * When a settle (complete, retry, fail) counts as done (default: its queue's `durability`).
   * With `'replicated'`, a WAIT for one replica rides in each settle's round trip; a settle that
   * no replica acknowledged within `replicationTimeoutMs` (default: the queue's, else 1,000) is
   * an error (ReplicationError, `hooks.onError`) and is sent again, as any failed settle is.
   *
   * @example
   * new Consumer(transport, 'payments', handler, { durability: 'replicated' });
   */
  readonly durability?: Durability;
}

/** The options as the loop uses them: defaults filled in, each checked. */
export interface LoopSettings<Payload> {
  readonly leaseMs: number;
  readonly beatMs: number;
  readonly timeoutMs: number;
  readonly renewMs: number;
  readonly stopTimeoutMs: number;
  readonly prefetch: number | 'auto';
  readonly maxResultBytes: number;
  readonly hooks: ConsumerHooks<Payload>;
  readonly log: (line: string) => void;
  /** What settles wait for (the options', else the queue's): undefined for nothing. */
  readonly replication: Replication | undefined;
}

/** The longest delay a Node timer takes (about 24.8 days): a longer one fires after 1 ms instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Fills in the defaults and checks each option; throws InvalidArgumentError on the first bad one.
 * Every time is an integer number of ms a timer can wait (at most 2^31 - 1, about 24.8 days):
 * leaseMs, beatMs and renewMs from 1, timeoutMs and stopTimeoutMs from 0. A hook is a function.
 * `maxResultBytes` is a positive integer, by default `queueMaxResultBytes` (the queue's).
 *
 * @example
 * const { leaseMs, beatMs } = settingsOf({ leaseMs: 60_000 });
 */
export function settingsOf<Payload>(
  options: ParkedLoopOptions<Payload>,
  queueMaxResultBytes = DEFAULT_MAX_RESULT_BYTES,
  queueReplication?: Replication,
): LoopSettings<Payload> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
  const leaseMs = ms('leaseMs', options.leaseMs ?? 30_000, 1);
  const beatMs = ms('beatMs', options.beatMs ?? 5_000, 1);
  const timeoutMs = ms('timeoutMs', options.timeoutMs ?? 0, 0);
  const renewMs = ms('renewMs', options.renewMs ?? Math.max(1, Math.floor(leaseMs / 3)), 1);
  const stopTimeoutMs = ms('stopTimeoutMs', options.stopTimeoutMs ?? 10_000, 0);
  const prefetch = options.prefetch ?? 'auto';
  // capped as the slots are: a claim asks for free slots plus prefetch, which must stay an exact integer
  if (prefetch !== 'auto' && (!Number.isSafeInteger(prefetch) || prefetch < 0 || prefetch > MAX_SLOTS)) {
    throw new InvalidArgumentError(`prefetch must be 'auto' or an integer from 0 to ${MAX_SLOTS}, got ${shown(prefetch)}`);
  }
  const maxResultBytes = options.maxResultBytes ?? queueMaxResultBytes;
  if (!Number.isSafeInteger(maxResultBytes) || maxResultBytes < 1) {
    throw new InvalidArgumentError(`maxResultBytes must be a positive integer, got ${shown(maxResultBytes)}`);
  }
  const hooks = options.hooks ?? {};
  if (typeof hooks !== 'object' || hooks === null) throw new InvalidArgumentError(`hooks must be an object, got ${shown(hooks)}`);
  for (const [name, hook] of Object.entries(hooks)) {
    if (hook !== undefined && typeof hook !== 'function') throw new InvalidArgumentError(`hooks.${name} must be a function, got ${shown(hook)}`);
  }
  const log = options.log === false ? () => {} : (options.log ?? stderrLine);
  if (typeof log !== 'function') throw new InvalidArgumentError(`log must be false or a function of one line, got ${shown(log)}`);
  const replication = replicationOf(options, queueReplication);
  return { leaseMs, beatMs, timeoutMs, renewMs, stopTimeoutMs, prefetch, maxResultBytes, hooks, log, replication };
}

/** The default log: one line on stderr. */
const stderrLine = (line: string): void => console.error(`[emq] ${line}`);

/** `value` if it is an integer number of ms from `min` to what a timer can wait, else InvalidArgumentError. */
function ms(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > MAX_TIMER_MS) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${MAX_TIMER_MS} ms, got ${shown(value)}`);
  }
  return value;
}
