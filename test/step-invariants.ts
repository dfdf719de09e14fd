import type { QueueSnapshot } from './invariants.js';

const pairs = (flat: readonly string[]): Array<[string, string]> => {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

const KINDS = new Set(['run', 'sleep', 'wait', 'invoke']);
/** The states each kind of step may record. */
const STATES_OF: Record<string, ReadonlySet<string>> = {
  run: new Set(['done', 'failed']),
  sleep: new Set(['sleeping', 'done']),
  wait: new Set(['waiting', 'done', 'timedout']),
  invoke: new Set(['invoking', 'done']),
};
/** The step a suspended row waits on (`sw`): its kind letter, the record's kind, and the row's state. */
const SUSPENSIONS: Record<string, { kind: string; record: string; states: ReadonlySet<string> }> = {
  s: { kind: 'sleep', record: 'sleeping', states: new Set(['scheduled']) },
  w: { kind: 'wait', record: 'waiting', states: new Set(['awaiting']) },
  // released by its child's news, not yet claimed: pending (or dead, when it was removed around it)
  i: { kind: 'invoke', record: 'invoking', states: new Set(['waiting', 'pending']) },
};

const zsetOf = (snap: QueueSnapshot, name: string): Map<string, string> => {
  const key = snap.others.get(name);
  return new Map(key?.type === 'zset' ? pairs(key.values) : []);
};

/** The jobs waiting for an event (`emq:{q}:awaiting`), a place of invariant 2 of their own. */
export function awaitingIds(snap: QueueSnapshot): string[] {
  return [...zsetOf(snap, 'awaiting').keys()];
}

/**
 * (q) Durable steps (docs/design/steps.md): a job's steps hash (`steps:<id>`) belongs to a row
 * that says it has one (`sn`), and each row with `sn` has one; each field is an index from 1 with
 * a well-formed record (a JSON object with a name, a known kind and a state that kind may have,
 * no two records of a job with one name) or `ev:<event>` with a sequence number; a suspended row
 * (`sw`) is in the state its step says (asleep: scheduled and among the sleepers; waiting for an
 * event: awaiting, among the waiters of its wait's key `wk`; invoking: waiting for its child) with
 * that step's record waiting; the sleepers' index names exactly the sleeping rows, at their due
 * time; the awaiting set names exactly the awaiting rows (a place of its own: (a)); every waiter
 * of an `on:` key is an awaiting row whose `wk` is that key; a wait's timeout is its record's
 * `until`; a completed job has no step still sleeping, waiting or invoking; a send's id record
 * (`evid:`) expires; kept events agree with their data; once any row
 * has steps, meta `st` is 1 (the claims and beats read them only then).
 */
export function stepViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  const steps = new Map<string, Record<string, string>>();
  const waiters = new Map<string, Map<string, string>>();
  for (const [rest, key] of snap.others) {
    if (rest.startsWith('steps:')) {
      if (key.type !== 'hash') out.push(`${rest}: a ${key.type}, not a hash`);
      else steps.set(rest.slice(6), Object.fromEntries(pairs(key.values)));
    } else if (rest.startsWith('on:')) {
      if (key.type !== 'zset') out.push(`${rest}: a ${key.type}, not a zset`);
      else waiters.set(rest, new Map(pairs(key.values)));
    } else if (rest.startsWith('evid:')) {
      if (key.type !== 'string') out.push(`${rest}: a ${key.type}, not a string`);
      else if (Number(key.values[0]) === -1) out.push(`${rest}: a send's id record without a TTL`);
    } else if (rest.startsWith('kept:')) {
      const data = snap.others.get(`keptd:${rest.slice(5)}`);
      const members = pairs(key.values).map(([m]) => m);
      const held = new Set(data?.type === 'hash' ? pairs(data.values).map(([f]) => f) : []);
      for (const m of members) if (!held.has(m)) out.push(`${rest}: kept event ${m} has no data`);
    }
  }
  const sleeping = zsetOf(snap, 'sleeping');
  const awaiting = zsetOf(snap, 'awaiting');
  for (const [id, row] of snap.rows) {
    const hash = steps.get(id);
    if (row.sn !== undefined && row.sn !== '1') out.push(`${id}: sn holds ${JSON.stringify(row.sn)}, not 1`);
    if (row.sn !== undefined && !hash) out.push(`${id}: has steps (sn) but no steps hash`);
    const records = new Map<number, { n?: unknown; k?: unknown; s?: unknown; u?: unknown }>();
    const names = new Set<string>();
    for (const [field, value] of Object.entries(hash ?? {})) {
      if (field.startsWith('ev:')) {
        if (!/^\d+$/.test(value)) out.push(`${id}: steps ${field} holds ${JSON.stringify(value)}, not a sequence number`);
        continue;
      }
      const index = Number(field);
      let record: { n?: unknown; k?: unknown; s?: unknown; u?: unknown };
      try {
        record = JSON.parse(value) as typeof record;
      } catch {
        out.push(`${id}: step ${field} is not JSON`);
        continue;
      }
      if (!Number.isSafeInteger(index) || index < 1) out.push(`${id}: steps field ${JSON.stringify(field)} is no index`);
      if (typeof record.n !== 'string' || record.n === '') out.push(`${id}: step ${field} has no name`);
      else if (names.has(record.n)) out.push(`${id}: two steps named ${JSON.stringify(record.n)}`);
      else names.add(record.n);
      if (!KINDS.has(String(record.k))) out.push(`${id}: step ${field} has kind ${JSON.stringify(record.k)}`);
      else if (!STATES_OF[String(record.k)]!.has(String(record.s))) out.push(`${id}: step ${field}, a ${String(record.k)}, is ${JSON.stringify(record.s)}`);
      records.set(index, record);
      // a finished job's suspensions are over: each one's end wrote its record
      if (row.s === 'completed' && (record.s === 'sleeping' || record.s === 'waiting' || record.s === 'invoking')) {
        out.push(`${id}: completed with step ${field} still ${JSON.stringify(record.s)}`);
      }
    }
    if (row.sw !== undefined) {
      const suspension = SUSPENSIONS[row.sw.slice(0, 1)];
      const record = records.get(Number(row.sw.slice(1)));
      if (!suspension) out.push(`${id}: sw ${JSON.stringify(row.sw)} names no kind of suspension`);
      else {
        if (!suspension.states.has(row.s ?? '')) out.push(`${id}: suspended at ${row.sw} but ${JSON.stringify(row.s)}`);
        if (!record || record.k !== suspension.kind || record.s !== suspension.record) {
          out.push(`${id}: suspended at ${row.sw} but that step's record is ${JSON.stringify(record ?? null)}`);
        }
      }
    }
    const asleep = row.s === 'scheduled' && row.sw?.startsWith('s') === true;
    if (asleep !== sleeping.has(id)) out.push(`${id}: ${asleep ? 'asleep but not among the sleepers' : 'among the sleepers but not asleep'}`);
    if (asleep && Number(sleeping.get(id)) !== snap.scheduled.get(id)) out.push(`${id}: sleeps until ${sleeping.get(id)} but is due at ${snap.scheduled.get(id)}`);
    if (row.s === 'awaiting') {
      if (!row.sw?.startsWith('w')) out.push(`${id}: awaiting but not suspended at a wait (sw ${JSON.stringify(row.sw)})`);
      if (row.wk === undefined || !waiters.get(row.wk.slice(snap.queue.length + 7))?.has(id)) out.push(`${id}: awaiting but not among its wait's waiters (${row.wk})`);
      const record = records.get(Number(row.sw?.slice(1)));
      const timeout = awaiting.get(id);
      const until = record?.u === undefined ? 'inf' : String(record.u);
      if (timeout !== until) out.push(`${id}: its wait times out at ${timeout}, its record says ${until}`);
    } else if (row.wk !== undefined) {
      out.push(`${id}: ${JSON.stringify(row.s)} with a wait's key (wk)`);
    }
  }
  for (const id of steps.keys()) if (snap.rows.get(id)?.sn === undefined) out.push(`steps:${id}: steps of ${snap.rows.has(id) ? 'a row without sn' : 'no row'}`);
  for (const id of sleeping.keys()) if (!snap.rows.has(id)) out.push(`sleeping: ${id} has no row`);
  for (const [key, members] of waiters) {
    for (const id of members.keys()) {
      const row = snap.rows.get(id);
      if (row?.s !== 'awaiting' || row.wk !== `emq:{${snap.queue}}:${key}`) out.push(`${key}: ${id} waits there but its row is ${JSON.stringify(row?.s ?? null)} with wk ${row?.wk}`);
    }
  }
  const stepped = [...snap.rows].find(([, row]) => row.sn !== undefined);
  if (stepped && snap.meta.st !== '1') out.push(`meta st is ${JSON.stringify(snap.meta.st ?? null)} while ${stepped[0]} has steps`);
  return out;
}
