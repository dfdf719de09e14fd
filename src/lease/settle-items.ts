import { bytesOver } from '../encode.js';
import { PayloadTooLargeError } from '../errors.js';
import { type Outcome, resultError } from '../handler.js';
import type { CompleteItem } from '../ops/complete.js';
import type { FailItem } from '../ops/fail.js';
import type { Held } from '../ops/op.js';
import type { ReleaseItem } from '../ops/release.js';
import type { RetryItem } from '../ops/retry.js';
import type { SuspendItem } from '../ops/suspend.js';
import type { Finished } from './rounds.js';

/** A held job as the lease scripts take it: its id and token, nothing else. */
export const leaseOf = (held: Held): Held => ({ id: held.id, token: held.token });

/**
 * `outcome`, unless it completes with a result over the cap: then failed for good, saying why (the
 * runtimes check it before, in runHandler; this holds the cap for any other caller too).
 */
function storable(outcome: Outcome, maxResultBytes: number): Outcome {
  if (outcome.kind !== 'complete' || outcome.result === undefined) return outcome;
  const bytes = bytesOver(outcome.result, maxResultBytes);
  if (bytes === undefined) return outcome;
  const error = new PayloadTooLargeError(`the handler's result is ${bytes} bytes of JSON, over maxResultBytes (${maxResultBytes})`);
  return { kind: 'fail', error: resultError(error) };
}

/** A settle script's items, and where each came from in the round's `finished`. */
export interface Bin<Item> {
  readonly indices: number[];
  readonly items: Item[];
}

/** A round's finished jobs sorted by the script that records them, each as that script takes it. */
export interface SettleItems {
  readonly retry: Bin<RetryItem>;
  readonly fail: Bin<FailItem>;
  readonly complete: Bin<CompleteItem>;
  /** Rate limited (RateLimitedError): given back with the given-back jobs, holding their groups. */
  readonly hold: Bin<ReleaseItem>;
  /** Suspended at a durable step (a sleep, a wait, an invoke): lua/suspend.lua. */
  readonly suspend: Bin<SuspendItem>;
}

/** Sorts `finished` by outcome into the settle scripts' items. */
export function settleItems(finished: readonly Finished[], maxResultBytes: number): SettleItems {
  const bins: SettleItems = {
    retry: { indices: [], items: [] },
    fail: { indices: [], items: [] },
    complete: { indices: [], items: [] },
    hold: { indices: [], items: [] },
    suspend: { indices: [], items: [] },
  };
  // each item written out (no spread of the lease into it): every settled job comes through here
  for (let i = 0; i < finished.length; i++) {
    const { job, outcome: given } = finished[i]!;
    const outcome = storable(given, maxResultBytes);
    const { id, token } = job;
    if (outcome.kind === 'retry') {
      bins.retry.items.push(outcome.delayMs === undefined ? { id, token, error: outcome.error } : { id, token, error: outcome.error, delayMs: outcome.delayMs });
    } else if (outcome.kind === 'fail') {
      bins.fail.items.push({ id, token, error: outcome.error });
    } else if (outcome.kind === 'hold') {
      bins.hold.items.push({ id, token, holdMs: outcome.holdMs });
    } else if (outcome.kind === 'suspend') {
      bins.suspend.items.push({ id, token, ...outcome.step });
    } else {
      bins.complete.items.push({ id, token, result: outcome.result });
    }
    bins[outcome.kind].indices.push(i);
  }
  return bins;
}
