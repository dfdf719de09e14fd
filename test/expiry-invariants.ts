import type { QueueSnapshot } from './invariants.js';

const pairs = (flat: readonly string[]): Array<[string, string]> => {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

/**
 * (s) Expiry (docs/design/job-controls.md): `emq:{q}:expiring` is a zset; every job with an expiry
 * (`xa`) that never started (`a` absent or 0) and waits to (pending, scheduled, waiting) is in it at
 * its `xa`, so the sweep finds it; an entry whose row has an expiry is at that expiry (an entry
 * may outlive its job: gone, finished, started; the sweep drops it); once any row has an expiry,
 * meta `xp` is 1 (the claims and beats sweep only then).
 */
export function expiryViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  const key = snap.others.get('expiring');
  if (key && key.type !== 'zset') out.push(`expiring: a ${key.type}, not a zset`);
  const index = new Map(key?.type === 'zset' ? pairs(key.values).map(([id, at]) => [id, Number(at)]) : []);
  let any = false;
  for (const [id, row] of [...snap.rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.xa === undefined) continue;
    any = true;
    const at = index.get(id);
    if (at !== undefined && at !== Number(row.xa)) out.push(`${id}: expires at ${row.xa} but is indexed at ${at}`);
    const waits = row.s === 'pending' || row.s === 'scheduled' || row.s === 'waiting';
    if (waits && Number(row.a ?? '0') === 0 && at === undefined) out.push(`${id}: ${row.s}, never started, expires at ${row.xa}, but not in the expiring index`);
  }
  if (any && snap.meta.xp !== '1') out.push(`rows have an expiry but meta xp is ${JSON.stringify(snap.meta.xp)}: the claims would not sweep them`);
  return out;
}
