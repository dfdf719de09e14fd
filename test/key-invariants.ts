import type { QueueSnapshot } from './invariants.js';

const pairs = (flat: readonly string[]): Array<[string, string]> => {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

const hashOf = (snap: QueueSnapshot, name: string): Record<string, string> => {
  const key = snap.others.get(name);
  return key?.type === 'hash' ? Object.fromEntries(pairs(key.values)) : {};
};

/** Each concurrency key's rate limit (`emq:{q}:krate`): key -> "limit:periodMs" (rule (k) reads it as the entry `#<key>`). */
export function keyRates(snap: QueueSnapshot): Record<string, string> {
  return hashOf(snap, 'krate');
}

/** The jobs parked on each concurrency key (`emq:{q}:kwait:<key>`): key -> ids. A place of invariant 2 (state pending). */
export function parkedIndex(snap: QueueSnapshot): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [rest, key] of snap.others) {
    if (rest.startsWith('kwait:') && key.type === 'zset') out.set(rest.slice(6), pairs(key.values).map(([id]) => id));
  }
  return out;
}

/**
 * (t) Concurrency keys (docs/design/job-controls.md, "Several concurrency keys"): each key's count
 * in `kactive` equals the active jobs whose `ck` names it (absent at 0, never negative: a count
 * too high blocks a key for good, too low lets it run over its limit); a job parked on a key is
 * pending and names that key; every key a row names or a limit is set for is in `keys` (obliterate
 * and the counts find the waits through it); a limit is an integer >= 0; once any row names a key
 * (or a limit is set), meta `ks` is 1 (the claims check keys only then); meta `kr` counts the keys
 * with a rate limit (absent for none: the claims read a key's rate only then), each in `keys`
 * (rule (k) holds the rate itself, as the entry `#<key>`). No key's parked jobs wait for nothing:
 * each key with parked jobs has a running job naming it (its end readmits them), a pending job
 * naming it in a lane (its claim runs it or parks it, its leaving gives its room back), its
 * throttle entry `#<key>` (its rate: a beat readmits them), or a limit of 0. The keys' limits
 * themselves (never more running than the limit) the property test holds at each step.
 */
export function keyViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  for (const name of ['kactive', 'klimit']) {
    const key = snap.others.get(name);
    if (key && key.type !== 'hash') out.push(`${name}: a ${key.type}, not a hash`);
  }
  const listed = snap.others.get('keys');
  if (listed && listed.type !== 'set') out.push(`keys: a ${listed.type}, not a set`);
  const known = new Set(listed?.type === 'set' ? listed.values : []);
  const active = hashOf(snap, 'kactive');
  const limits = hashOf(snap, 'klimit');
  const running = new Map<string, number>();
  let named = false;
  for (const [id, row] of [...snap.rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.ck === undefined) continue;
    named = true;
    for (const k of row.ck.split(',')) {
      if (!known.has(k)) out.push(`${id}: names key ${k}, which is not in the keys set`);
      if (row.s === 'active') running.set(k, (running.get(k) ?? 0) + 1);
    }
  }
  for (const k of new Set([...running.keys(), ...Object.keys(active)])) {
    const counted = active[k];
    const n = running.get(k) ?? 0;
    if (n === 0 ? counted !== undefined : counted !== String(n)) out.push(`key ${k}: kactive says ${JSON.stringify(counted)} but ${n} running job(s) name it`);
  }
  for (const [k, limit] of Object.entries(limits)) {
    if (!/^\d+$/.test(limit)) out.push(`key ${k}: limit ${JSON.stringify(limit)} is not an integer >= 0`);
    if (!known.has(k)) out.push(`key ${k} has a limit but is not in the keys set`);
    named = true;
  }
  for (const [k, ids] of parkedIndex(snap)) {
    for (const id of ids) {
      const row = snap.rows.get(id);
      if (row && !(row.ck ?? '').split(',').includes(k)) out.push(`${id}: parked on key ${k}, which it does not name (${JSON.stringify(row.ck)})`);
    }
  }
  const rates = keyRates(snap);
  for (const k of Object.keys(rates)) {
    if (!known.has(k)) out.push(`key ${k} has a rate limit but is not in the keys set`);
    named = true;
  }
  const kr = Object.keys(rates).length;
  if ((snap.meta.kr === undefined ? 0 : Number(snap.meta.kr)) !== kr) out.push(`meta kr holds ${JSON.stringify(snap.meta.kr)} but ${kr} keys have a rate limit`);
  const parked = parkedIndex(snap);
  const parkedIds = new Set([...parked.values()].flat());
  const inLanes = new Set<string>();
  for (const [id, row] of snap.rows) {
    if (row.s === 'pending' && row.ck !== undefined && !parkedIds.has(id)) for (const k of row.ck.split(',')) inLanes.add(k);
  }
  for (const [k, ids] of parked) {
    if (ids.length === 0 || running.has(k) || inLanes.has(k) || snap.throttled.has(`#${k}`) || limits[k] === '0') continue;
    out.push(`key ${k}: ${ids.length} job(s) parked on it wait for nothing (no job naming it runs or waits in a lane, it is not throttled, its limit is ${JSON.stringify(limits[k])})`);
  }
  if (named && snap.meta.ks !== '1') out.push(`jobs name concurrency keys but meta ks is ${JSON.stringify(snap.meta.ks)}: the claims would not check them`);
  return out;
}
