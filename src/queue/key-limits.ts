import { assertKeyName } from '../encode.js';
import { InvalidArgumentError, PartitionError, shown } from '../errors.js';
import { keyLimitOp, keyRateOp } from '../ops/key-limit.js';
import { checkRateLimit, type RateLimit } from './rate-limits.js';
import { type KeyInfo, keyLimitsOp } from '../ops/key-limits.js';
import type { Scripts } from '../ops/scripts.js';

// Concurrency keys (docs/guides/job-controls.md): a job names up to four beside its group, and
// starts only while each is under its limit.

/** The most keys one keyLimits call lists. */
const KEYS_SHOWN = 10_000;

/** Queue.setKeyLimit: checked before any Redis call; answers the parked jobs readmitted. */
export async function setKeyLimit(scripts: Scripts, key: string, limit: number | null): Promise<number> {
  assertKeyName(key);
  if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) throw new InvalidArgumentError(`a key limit must be an integer >= 0 or null, got ${shown(limit)}`);
  return scripts.run(keyLimitOp(key, limit));
}

/** Queue.setKeyRateLimit: checked before any Redis call; answers the parked jobs readmitted. */
export async function setKeyRateLimit(scripts: Scripts, key: string, rate: RateLimit | null): Promise<number> {
  assertKeyName(key);
  return scripts.run(keyRateOp(key, checkRateLimit(rate)));
}

/** Queue.keyLimits. */
export function keyLimits(scripts: Scripts): Promise<KeyInfo[]> {
  return scripts.run(keyLimitsOp(KEYS_SHOWN));
}

/** A partitioned queue refuses concurrency keys: a key spans groups, and its groups live in different slots. */
export function refuseKeys(queue: string): never {
  throw new PartitionError(`queue ${queue} is partitioned: concurrency keys span groups, which live in different partitions, so no script could hold a key's count; use a queue of one partition for jobs with keys`);
}

export type { KeyInfo } from '../ops/key-limits.js';
