/**
 * How a parked consumer waits after a failed call to Redis: 100 ms doubling to 5 s, with jitter,
 * so a Redis that went away is not hammered by every consumer in step, and one that comes back
 * is used again within seconds. The loop's claims and a settle sent on its own share it.
 *
 * @example
 * for (let failures = 0; ; failures++) {
 *   try { return await send(); } catch { await sleep(backoffMs(failures)); }
 * }
 */
export function backoffMs(failures: number): number {
  const base = Math.min(5_000, 100 * 2 ** failures);
  return base / 2 + Math.random() * (base / 2);
}

