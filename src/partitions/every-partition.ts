import { InvalidArgumentError } from '../errors.js';

/**
 * Runs a bulk admin call on every partition: at once without a limit; with one, partition after
 * partition, each with what is left of it (`size` says how much a result took).
 *
 * @example
 * const counts = await everyPartition(parts, limit, (part, left) => part.drain(left === undefined ? {} : { limit: left }), (n) => n);
 */
export async function everyPartition<Part, T>(
  parts: readonly Part[],
  limit: number | undefined,
  run: (part: Part, limit: number | undefined) => Promise<T>,
  size: (result: T) => number,
): Promise<T[]> {
  if (limit === undefined) return Promise.all(parts.map((part) => run(part, undefined)));
  if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError(`limit must be an integer >= 1, got ${String(limit)}`);
  const out: T[] = [];
  let left = limit;
  for (const part of parts) {
    if (left <= 0) break;
    const result = await run(part, left);
    out.push(result);
    left -= size(result);
  }
  return out;
}
