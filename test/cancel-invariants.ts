import type { QueueSnapshot } from './invariants.js';

const pairs = (flat: readonly string[]): Array<[string, string]> => {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

/** The index of cancelled jobs (`emq:{q}:cancelled`): id -> when it was cancelled (ms). */
export function cancelledIndex(snap: QueueSnapshot): Map<string, number> {
  const key = snap.others.get('cancelled');
  return new Map(key?.type === 'zset' ? pairs(key.values).map(([id, at]) => [id, Number(at)]) : []);
}

/**
 * (r) Cancel (docs/design/job-controls.md): `emq:{q}:cancelled` is a zset (a place of invariant 2:
 * (a) checks each of its jobs' rows say `cancelled`); a cancelled row carries its reason (`cx`) and
 * its finish time (`f`) equal to its score, no lease mark but `<token>/x` when it was claimed (a run
 * cancelled under its lease, so that run's late settle answers cancelled), and no suspension (`sw`,
 * `wk`); a reason is on no other row but an active one (its cancel asked, its run not yet ended),
 * and meta `cx` counts exactly those active rows, absent at 0 (the settles read a row's `cx` only
 * while it is above 0: a count too low would let a cancelled run complete).
 */
export function cancelViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  const key = snap.others.get('cancelled');
  if (key && key.type !== 'zset') out.push(`cancelled: a ${key.type}, not a zset`);
  const index = cancelledIndex(snap);
  let asked = 0;
  for (const [id, row] of [...snap.rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.s === 'cancelled') {
      if (row.cx === undefined || row.cx === '') out.push(`${id}: cancelled without a reason (cx)`);
      if (row.f === undefined) out.push(`${id}: cancelled without a finish time (f)`);
      else if (index.has(id) && index.get(id) !== Number(row.f)) out.push(`${id}: cancelled at ${row.f} but indexed at ${index.get(id)}`);
      if (row.t !== undefined && !/^\d+(\/x)?$/.test(row.t) && !/^\d+\/[rfgs]\d$/.test(row.t)) out.push(`${id}: cancelled with lease mark ${row.t}`);
      if (row.sw !== undefined || row.wk !== undefined) out.push(`${id}: cancelled but still suspended (sw ${String(row.sw)}, wk ${String(row.wk)})`);
    } else if (row.cx !== undefined) {
      if (row.s !== 'active') out.push(`${id}: ${String(row.s)} with a cancel reason (cx): only a cancelled row, or an active one whose cancel was asked, has one`);
      else asked++;
    }
  }
  const counted = snap.meta.cx;
  if (asked === 0 ? counted !== undefined : counted !== String(asked)) {
    out.push(`meta cx is ${JSON.stringify(counted)} but ${asked} running job(s) have their cancel asked`);
  }
  return out;
}
