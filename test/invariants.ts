/**
 * The keyspace invariant checker: reads every key of one queue in a single atomic step and lists
 * each way the state breaks the invariants of the design (docs: DESIGN.md, "Keyspace" and
 * "Invariants"). An empty list means the queue's state is consistent.
 *
 * It is meant for any suite that drives a queue and wants to know the state is still whole after
 * each step: the property tests over random interleavings, and the fault-injection suite (killed
 * consumers, Redis restarts, REST faults), which may call it while consumers still run, because
 * the snapshot is taken inside one Lua script and so sees one instant of the queue.
 *
 * Usage:
 * ```ts
 * expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
 * ```
 *
 * Or in two steps, to inspect the snapshot too:
 * ```ts
 * const snap = await snapshotQueue(redis.raw, queue.name);
 * expect(findViolations(snap)).toEqual([]);
 * ```
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import { MAX_PROGRESS_BYTES, PARTITION_JOB_ID } from '../src/encode.js';
import { DEFAULT_EVENTS_SETTINGS, MAX_EVENT_RESULT_BYTES, MAX_EVENTS_MAX_LEN } from '../src/events/events.js';
import { decodeEntry } from '../src/events/decode.js';
import { FIXED_KEYS, keyspace, type FixedKey } from '../src/keyspace.js';
import { MAX_PARTITIONS, parsePartitionName, PARTITIONS_REGISTRY } from '../src/partitions/partition-of.js';
import { firedBy, parseStoredSpec } from '../src/schedulers/schedulers.js';
import { formatTraceparent, parseTraceparent } from '../src/telemetry/trace-context.js';
import { awaitingIds, stepViolations } from './step-invariants.js';
import { cancelledIndex, cancelViolations } from './cancel-invariants.js';
import { expiryViolations } from './expiry-invariants.js';
import { keyRates, keyViolations, parkedIndex } from './key-invariants.js';

/** The ring entry that stands for ungrouped work (the pending zset). */
export const UNGROUPED = '*';

/** The member that keeps the active zset a skiplist (lua/includes/active_skiplist.lua), read from the script itself. */
export const ACTIVE_SKIPLIST_MEMBER = ((): string => {
  const lua = readFileSync(new URL('../lua/includes/active_skiplist.lua', import.meta.url), 'utf8');
  const member = /^local ACTIVE_SKIPLIST_MEMBER = '([^']+)'$/m.exec(lua)?.[1];
  if (member === undefined) throw new Error('lua/includes/active_skiplist.lua: no ACTIVE_SKIPLIST_MEMBER');
  return member;
})();

/** The doorbell's cap: `wake` never holds more tokens than this. */
export const WAKE_CAP = 64;

/** A Redis key type as `TYPE` names it. */
type KeyType = 'hash' | 'zset' | 'list' | 'set' | 'string' | 'stream' | 'none';

/**
 * The type of each fixed key the checker knows. A fixed key of the keyspace missing here (one
 * added later) is read but not type-checked, so the checker keeps working as the keyspace grows.
 */
const FIXED_TYPES: Readonly<Record<string, KeyType>> = {
  meta: 'hash',
  pending: 'zset',
  ring: 'list',
  active: 'zset',
  scheduled: 'zset',
  dead: 'zset',
  wake: 'list',
  gpaused: 'set',
  glimit: 'hash',
  gactive: 'hash',
  groups: 'set',
  sched: 'list',
  completed: 'zset',
  events: 'stream',
  schedulers: 'zset',
  throttled: 'zset',
};

/** What stands for the queue's own rate limit in `throttled` and the starts logs (not a group name). */
export const QUEUE_ENTRY = '!';

/** The most events the scripts put in one stream entry (lua/includes/flush_events.lua). */
const EVENTS_PER_ENTRY = 500;

/** One entry of the events stream: its id and its flat field-value list. */
export interface StreamEntry {
  readonly id: string;
  readonly fields: readonly string[];
}

/** The bells: token lists a parked consumer blocks on, each capped at {@link WAKE_CAP} tokens `1`. */
const BELLS = ['wake', 'sched'] as const;

/**
 * Every key of a queue as one consistent picture. zsets map member -> score; hashes map field ->
 * value; absent keys read as empty.
 */
export interface QueueSnapshot {
  readonly queue: string;
  /** The server's clock when the snapshot was taken (ms). */
  readonly now: number;
  /** Job rows by id (`JOB:...`): the `emq:{q}:job:<id>` hashes. */
  readonly rows: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Ungrouped claimable jobs: id -> order score. */
  readonly pending: ReadonlyMap<string, number>;
  /** Each group's claimable jobs (`emq:{q}:lane:<g>`): group -> (id -> order score). */
  readonly lanes: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /**
   * The arrivals lists, claimable jobs at the default priority in arrival order (their order is
   * their row's `o`): ring entry (`*` for `emq:{q}:fifo`, g for `emq:{q}:fifo:<g>`) -> ids, head
   * first.
   */
  readonly fifos: ReadonlyMap<string, readonly string[]>;
  /** Leased jobs: id -> lease deadline (ms). */
  readonly active: ReadonlyMap<string, number>;
  /** Whether the active zset holds the member that keeps it a skiplist (scored +inf; not in `active`). */
  readonly activeSkiplist: boolean;
  /** Delayed or backing-off jobs: id -> due time (ms). */
  readonly scheduled: ReadonlyMap<string, number>;
  /** Dead jobs: id -> when they died (ms). */
  readonly dead: ReadonlyMap<string, number>;
  /**
   * The index of completed rows (`emq:{q}:completed`): id -> when it completed (ms). An index, not
   * a place: an entry may outlive its row (expired) or name an id enqueued again since.
   */
  readonly completed: ReadonlyMap<string, number>;
  /** The ring, head first. */
  readonly ring: readonly string[];
  /** The doorbell tokens. */
  readonly wake: readonly string[];
  /** Tokens of every bell list the snapshot found (`wake`, and `sched` where the keyspace has it). */
  readonly bells: ReadonlyMap<string, readonly string[]>;
  readonly meta: Readonly<Record<string, string>>;
  readonly gpaused: ReadonlySet<string>;
  /** Raw stored limits: group -> value. */
  readonly glimit: Readonly<Record<string, string>>;
  /** Raw stored active counts: group -> value. */
  readonly gactive: Readonly<Record<string, string>>;
  readonly groups: ReadonlySet<string>;
  /** Keys holding a type other than the one the keyspace gives them: key -> actual type. */
  readonly wrongTypes: ReadonlyMap<string, string>;
  /** Keys that must expire but have no TTL (an enqueue request's record). */
  readonly undying: readonly string[];
  /** The schedulers' next slots (`emq:{q}:schedulers`): id -> slot (ms; Infinity: it fires no more). */
  readonly schedulers: ReadonlyMap<string, number>;
  /** The scheduler rows (`emq:{q}:scheduler:<id>`): id -> fields. */
  readonly schedulerRows: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Throttled entries (`emq:{q}:throttled`): a group, `*` or `!` (the queue) -> when it may start again (ms). */
  readonly throttled: ReadonlyMap<string, number>;
  /** The groups' rate limits (`emq:{q}:grate`): group -> "limit:periodMs". */
  readonly grate: Readonly<Record<string, string>>;
  /** The holds (`emq:{q}:holds`): entry -> held until (ms). */
  readonly holds: Readonly<Record<string, string>>;
  /** The starts logs: `!` (emq:{q}:starts) or a group (emq:{q}:starts:<g>) -> (token -> start ms). */
  readonly starts: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /**
   * The dedupe keys (`emq:{q}:dd:<key>`): key -> the job id it names and whether it expires (a
   * ttl-mode key has a TTL, an until-finished one none).
   */
  readonly dedupe: ReadonlyMap<string, { readonly id: string; readonly expires: boolean }>;
  /** Flow parents waiting for their children (`emq:{q}:waiting`): id -> when written (ms). */
  readonly waiting: ReadonlyMap<string, number>;
  /** The outbox (`emq:{q}:outbox`): entry -> when appended (ms). */
  readonly outbox: ReadonlyMap<string, number>;
  /** The children hashes (`emq:{q}:kids:<id>`): parent id -> its fields and whether it expires. */
  readonly kids: ReadonlyMap<string, { readonly fields: Readonly<Record<string, string>>; readonly expires: boolean }>;
  /** The events stream's entries, oldest first, or undefined when the stream does not exist. */
  readonly events: readonly StreamEntry[] | undefined;
  /**
   * The per-minute buckets (`emq:{q}:minutes`): field (`c<minute>`, `d<minute>`) -> count, and the
   * key's PTTL (-1: none); undefined when the key does not exist.
   */
  readonly minutes: { readonly fields: Readonly<Record<string, string>>; readonly pttl: number } | undefined;
  /**
   * How many entries more than its cap the events stream may hold: the server's
   * `stream-node-max-entries` (see findViolations, (h)).
   */
  readonly eventsSlack: number;
  /**
   * The queue's other keys (the durable steps' among them: test/step-invariants.ts), by their name
   * after the prefix: type and values as the snapshot read them (a zset's members and scores flat,
   * a string's PTTL and value).
   */
  readonly others: ReadonlyMap<string, { readonly type: string; readonly values: readonly string[] }>;
}

/**
 * One atomic read of a queue's keys. It declares the queue's fixed keys (so on a cluster it runs
 * on the node of the queue's slot), then SCANs `emq:{q}:*` (every key of the queue shares the
 * `{q}` hash tag, so they all live on that node) and reads each key by its type: strings by their
 * PTTL and value, streams by their entries. Reply: { now, {key, type, {values...}}, ... }.
 */
const SNAPSHOT_LUA = `
local pattern = ARGV[1] .. '*'
local t = redis.call('TIME')
local out = { tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) }
local seen = {}
local cursor = '0'
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do
    if not seen[k] then
      seen[k] = true
      local kind = redis.call('TYPE', k)['ok']
      local v = {}
      if kind == 'hash' then
        v = redis.call('HGETALL', k)
        -- a flow parent's children hash: its TTL first (one not yet written has one)
        -- a flow parent's children hash and the per-minute buckets: their TTL first
        if string.find(k, ':kids:', 1, true) or k == ARGV[1] .. 'minutes' then table.insert(v, 1, tostring(redis.call('PTTL', k))) end
      elseif kind == 'zset' then v = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
      elseif kind == 'list' then v = redis.call('LRANGE', k, 0, -1)
      elseif kind == 'set' then v = redis.call('SMEMBERS', k)
      elseif kind == 'stream' then v = redis.call('XRANGE', k, '-', '+')
      elseif kind == 'string' then v = { tostring(redis.call('PTTL', k)), redis.call('GET', k) }
      end
      out[#out + 1] = { k, kind, v }
    end
  end
until cursor == '0'
return out
`;

const pairs = (flat: readonly string[]): Array<[string, string]> => {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

const asStrings = (value: unknown): string[] =>
  Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : String(v))) : [];

/**
 * Reads every key of queue `queueName` in one Lua script, so the picture is of one instant even
 * while other clients work on the queue. The script SCANs the database for the queue's prefix, so
 * its cost grows with the database's key count (a few ms per ten thousand keys): fine for tests,
 * not for production.
 *
 * @param raw an ioredis client (RESP2) on the queue's Redis
 * @param queueName the queue's name (not its key prefix)
 */
export async function snapshotQueue(raw: Redis, queueName: string): Promise<QueueSnapshot> {
  const ks = keyspace(queueName);
  const eventsSlack = await streamNodeMaxEntries(raw);
  const reply = (await raw.eval(SNAPSHOT_LUA, ks.fixed.length, ...ks.fixed, ks.prefix)) as unknown;
  if (!Array.isArray(reply)) throw new Error(`snapshot: unexpected reply ${JSON.stringify(reply)}`);
  const [nowRaw, ...entries] = reply as unknown[];

  const rows = new Map<string, Record<string, string>>();
  const lanes = new Map<string, Map<string, number>>();
  const fifos = new Map<string, string[]>();
  const fixed = new Map<string, { type: string; values: string[] }>();
  const wrongTypes = new Map<string, string>();
  const schedulerRows = new Map<string, Record<string, string>>();
  const starts = new Map<string, Map<string, number>>();
  let grate: Record<string, string> = {};
  let holds: Record<string, string> = {};
  const undying: string[] = [];
  const dedupe = new Map<string, { id: string; expires: boolean }>();
  const kids = new Map<string, { fields: Record<string, string>; expires: boolean }>();
  let waiting = new Map<string, number>();
  let outbox = new Map<string, number>();
  let events: StreamEntry[] | undefined;
  let minutes: { fields: Record<string, string>; pttl: number } | undefined;
  const others = new Map<string, { type: string; values: string[] }>();

  for (const entry of entries) {
    const [key, type, rawValues] = entry as [string, string, unknown];
    // a key that expired between the SCAN that listed it and its TYPE (a request record) is gone
    if (type === 'none') continue;
    const rest = key.slice(ks.prefix.length);
    if (rest === 'events' && type === 'stream') {
      events = (rawValues as Array<[string, string[]]>).map(([id, fields]) => ({ id, fields }));
      continue;
    }
    const values = asStrings(rawValues);
    if ((FIXED_KEYS as readonly string[]).includes(rest)) {
      const expected = FIXED_TYPES[rest];
      if (expected !== undefined && type !== expected) wrongTypes.set(key, type);
      else fixed.set(rest, { type, values });
    } else if (rest.startsWith('job:')) {
      if (type !== 'hash') wrongTypes.set(key, type);
      else rows.set(rest.slice(4), Object.fromEntries(pairs(values)));
    } else if (rest.startsWith('scheduler:')) {
      if (type !== 'hash') wrongTypes.set(key, type);
      else schedulerRows.set(rest.slice(10), Object.fromEntries(pairs(values)));
    } else if (rest === 'starts' || rest.startsWith('starts:')) {
      if (type !== 'zset') wrongTypes.set(key, type);
      else starts.set(rest === 'starts' ? QUEUE_ENTRY : rest.slice(7), new Map(pairs(values).map(([m, s]) => [m, Number(s)])));
    } else if (rest === 'grate' || rest === 'holds') {
      if (type !== 'hash') wrongTypes.set(key, type);
      else if (rest === 'grate') grate = Object.fromEntries(pairs(values));
      else holds = Object.fromEntries(pairs(values));
    } else if (rest.startsWith('lane:')) {
      if (type !== 'zset') wrongTypes.set(key, type);
      else lanes.set(rest.slice(5), new Map(pairs(values).map(([m, s]) => [m, Number(s)])));
    } else if (rest === 'fifo' || rest.startsWith('fifo:')) {
      if (type !== 'list') wrongTypes.set(key, type);
      else fifos.set(rest === 'fifo' ? UNGROUPED : rest.slice(5), values);
    } else if (rest.startsWith('req:')) {
      // an enqueue request's first answer: remembered for a while, never for ever
      if (type !== 'string') wrongTypes.set(key, type);
      // PTTL -1: no TTL at all (0 is a key expiring this very millisecond)
      else if (Number(values[0]) === -1) undying.push(key);
    } else if (rest === 'waiting' || rest === 'outbox') {
      if (type !== 'zset') wrongTypes.set(key, type);
      else if (rest === 'waiting') waiting = new Map(pairs(values).map(([m, s]) => [m, Number(s)]));
      else outbox = new Map(pairs(values).map(([m, s]) => [m, Number(s)]));
    } else if (rest.startsWith('kids:')) {
      if (type !== 'hash') wrongTypes.set(key, type);
      else kids.set(rest.slice(5), { fields: Object.fromEntries(pairs(values.slice(1))), expires: Number(values[0]) !== -1 });
    } else if (rest === 'minutes') {
      if (type !== 'hash') wrongTypes.set(key, type);
      else minutes = { fields: Object.fromEntries(pairs(values.slice(1))), pttl: Number(values[0]) };
    } else if (rest.startsWith('dd:')) {
      // a dedupe key: the id of the job holding it, with a TTL in ttl mode
      if (type !== 'string') wrongTypes.set(key, type);
      else dedupe.set(rest.slice(3), { id: values[1] ?? '', expires: Number(values[0]) !== -1 });
    }
    // anything else: the checkers of later features read it (test/step-invariants.ts)
    else others.set(rest, { type, values });
  }

  const values = (name: string): string[] => fixed.get(name)?.values ?? [];
  // the member that keeps the active zset a skiplist is no lease: apart, when it is exactly that
  const activeLeases = (): { active: Map<string, number>; activeSkiplist: boolean } => {
    const all = pairs(values('active'));
    const kept = all.filter(([m, score]) => !(m === ACTIVE_SKIPLIST_MEMBER && score === 'inf'));
    return { active: new Map(kept.map(([m, score]) => [m, Number(score)])), activeSkiplist: kept.length < all.length };
  };
  const zset = (name: FixedKey): Map<string, number> => new Map(pairs(values(name)).map(([m, s]) => [m, Number(s)]));
  const hash = (name: FixedKey): Record<string, string> => Object.fromEntries(pairs(values(name)));

  return {
    queue: queueName,
    now: Number(nowRaw),
    rows,
    pending: zset('pending'),
    lanes,
    fifos,
    ...activeLeases(),
    scheduled: zset('scheduled'),
    dead: zset('dead'),
    completed: zset('completed'),
    ring: values('ring'),
    wake: values('wake'),
    bells: new Map(BELLS.filter((b) => fixed.has(b)).map((b) => [b, values(b)])),
    meta: hash('meta'),
    gpaused: new Set(values('gpaused')),
    glimit: hash('glimit'),
    gactive: hash('gactive'),
    groups: new Set(values('groups')),
    wrongTypes,
    undying,
    schedulers: new Map(pairs(values('schedulers')).map(([m, s]) => [m, s === 'inf' ? Infinity : Number(s)])),
    schedulerRows,
    throttled: zset('throttled'),
    grate,
    holds,
    starts,
    dedupe,
    waiting,
    outbox,
    kids,
    events,
    eventsSlack,
    minutes,
    others,
  };
}

/**
 * The server's `stream-node-max-entries` (default 100): how many entries a stream's macro node holds
 * at most, which is how far past its MAXLEN an `XADD ... MAXLEN ~` leaves a stream (it trims whole
 * nodes). With 0 (nodes bounded by bytes alone) an entry takes at least a byte of a node, so the
 * node's byte bound, `stream-node-max-bytes`, bounds it. 100 when CONFIG is not allowed.
 */
async function streamNodeMaxEntries(raw: Redis): Promise<number> {
  try {
    const [, entries] = (await raw.config('GET', 'stream-node-max-entries')) as string[];
    if (Number(entries) > 0) return Number(entries);
    const [, bytes] = (await raw.config('GET', 'stream-node-max-bytes')) as string[];
    return Number(bytes) > 0 ? Number(bytes) : 4096;
  } catch {
    return 100;
  }
}

/** Where a job id was found: one of the claimable/leased/waiting/dead structures. */
type Place =
  | { kind: 'pending' }
  | { kind: 'lane'; group: string }
  | { kind: 'fifo'; entry: string }
  | { kind: 'parked'; key: string }
  | { kind: 'scheduled' | 'active' | 'dead' | 'waiting' | 'awaiting' | 'cancelled' };

const placeName = (p: Place): string =>
  p.kind === 'lane' ? `lane:${p.group}` : p.kind === 'fifo' ? (p.entry === UNGROUPED ? 'fifo' : `fifo:${p.entry}`) : p.kind === 'parked' ? `kwait:${p.key}` : p.kind;

/** The row state each place requires. */
const STATE_OF: Record<Place['kind'], string> = {
  pending: 'pending',
  lane: 'pending',
  fifo: 'pending',
  scheduled: 'scheduled',
  active: 'active',
  dead: 'dead',
  waiting: 'waiting',
  awaiting: 'awaiting',
  cancelled: 'cancelled',
  parked: 'pending',
};

const STATES = new Set(['pending', 'scheduled', 'active', 'completed', 'dead', 'waiting', 'awaiting', 'cancelled']);

const isCount = (value: string | undefined): boolean => value !== undefined && /^\d+$/.test(value);

/** An order score is `priority * 2^32 + (seq mod 2^32)`: its high part is the row's priority. */
const ORDER_SPAN = 2 ** 32;

/**
 * Why `score` cannot be the order of a job whose row has priority `p` (absent: 0), or undefined
 * when it can: an integer in [p * 2^32, (p + 1) * 2^32).
 */
function badOrder(score: number, p: string | undefined): string | undefined {
  const priority = Number(p ?? '0');
  if (!Number.isSafeInteger(score) || Math.floor(score / ORDER_SPAN) !== priority) {
    return `order ${String(score)} does not belong to priority ${priority}`;
  }
  return undefined;
}

/** How many claimable jobs ring entry `entry` holds: its zset's (pending for `*`) and its list's. */
const claimable = (snap: QueueSnapshot, entry: string): number =>
  (entry === UNGROUPED ? snap.pending.size : (snap.lanes.get(entry)?.size ?? 0)) + (snap.fifos.get(entry)?.length ?? 0);

/**
 * Whether ring entry `entry` belongs on the ring in `snap`: its lane (or pending, for `*`) with
 * its arrivals list is non-empty, it is not throttled (held, or at its rate limit) and, for a
 * group, the group is not paused and is below its limit when it has one.
 * The queue's own paused flag does not matter: the ring describes the lanes, claim checks pause.
 */
export function serviceable(snap: QueueSnapshot, entry: string): boolean {
  if (claimable(snap, entry) === 0) return false;
  if (snap.throttled.has(entry)) return false;
  if (entry === UNGROUPED) return true;
  if (snap.gpaused.has(entry)) return false;
  const limit = snap.glimit[entry];
  if (limit === undefined) return true;
  return Number(snap.gactive[entry] ?? '0') < Number(limit);
}

/**
 * Every violation of the keyspace invariants in `snap`, as readable sentences naming the job,
 * group or key. Empty when the state is consistent. The checks:
 *
 * - (a) placement: every job id is in exactly one of pending / one lane / one arrivals list /
 *   scheduled / active / dead, or in none and then its row says `completed` (or the row is gone).
 *   A job in a place has a row, and the row's `s` agrees: `pending` for pending, lanes and lists,
 *   `scheduled`, `active`, `dead`. A job in lane g or list `fifo:g` has `g` = g in its row; a job
 *   in pending or `fifo` has no `g`. Ids are `JOB:` ids; rows carry a known state.
 * - (b) group counts: `gactive[g]` equals the number of active jobs whose row has group g (absent
 *   means 0; a stored value is a positive integer: a count that reaches 0 is deleted, so a group
 *   that ran once leaves no field behind). `glimit` values are non-negative integers.
 * - (c) the ring: each entry at most once, and an entry is on the ring iff it is serviceable
 *   (see {@link serviceable}).
 * - (d) the bells: `wake` (and `sched`, the schedule bell, where the keyspace has one) hold at
 *   most 64 tokens, each `1`.
 * - (e) bookkeeping: every key has the type the keyspace gives it, and every group with a lane or
 *   an arrivals list is in `groups` (the counts read lanes through that set).
 * - (g) finished rows: every `completed` row is in the completed index with its `f` as score (an
 *   entry whose row is gone or in another state is stale, and allowed: rows expire on their own
 *   TTL and the index is trimmed behind them); the dead-job retention in `meta` (`dage`, `dmax`)
 *   and the counters of retries and reaped leases (`retried`, `stalled`) hold non-negative integers.
 * - (f) order: a claimable job's lane score is an order of its row's priority (an integer in
 *   [p * 2^32, (p + 1) * 2^32)) and equals its row's `o` when the row has one. A row may leave `o`
 *   out only while its job waits in a lane never claimed (enqueue writes no `o` for a job that goes
 *   straight to a lane; the first claim writes the lane score into the row): so a claimable row
 *   without `o` has no lease token `t`, and every scheduled row and every row with a `t` (active,
 *   dead, completed, or back in its lane) has an `o` of its priority. An arrivals list holds only
 *   jobs never claimed, at priority 0, each row with its `o`, strictly rising from head to tail
 *   (enqueue appends a fresh seq; anything going back in its place goes to the zset).
 * - (g) trace context: a row's `x`, when present, is a version-00 W3C traceparent as the core
 *   writes it (`00-<32 hex>-<16 hex>-<2 hex>`, lowercase, ids not all zero), so every reader can
 *   parse it.
 * - (h) results and progress: a row's result `r` is on a completed row only (complete writes it
 *   and nothing moves a completed row on) and is JSON; its progress `pg` is JSON of at most 4096
 *   bytes, on a row claimed at least once (it has a `t`: only a holder writes progress, and it
 *   stays as the job moves on, retried, given back or reprocessed).
 * - (i) the events stream: the meta settings `ecap` (0 to 10,000,000) and `erb` (0 to 1 MiB) are
 *   counts in range; with the cap 0 (events off) no stream exists; otherwise it holds at most the
 *   cap (absent: 10,000) plus the slack `MAXLEN ~` allows: Redis trims only whole macro nodes,
 *   dropping the oldest node while what is left still reaches the cap, so up to one node's worth
 *   past it (`stream-node-max-entries`, 100 by default, {@link QueueSnapshot.eventsSlack}). Every
 *   entry holds 1 to 500 events, each one the decoder knows with the fields its name requires
 *   (src/events/events.ts), and every job it names is a `JOB:` id.
 * - (j) schedulers: each id in `schedulers` has a row and each row an entry; the entry's score is
 *   the row's next slot `n`, or +inf when it has none (it fires no more); the row's counts (`v`,
 *   `f`, `p`, `c`, `u`, `ma` >= 1), payload `d` (JSON), backoff `b` and spec `k` (what checkSpec
 *   takes, its limit the row's `m`, an `every` spec with its anchor `an`) are well formed; it has
 *   fired no more than its limit, and none left to fire once it reached it; its next slot is after
 *   its last (`l`, present once it fired); a job it fired since it was made (`JOB:<id>@<slot>`, made
 *   no earlier than the scheduler) is for a slot no later than its last. meta `fired` is a count;
 *   meta `sc` is `1` once any scheduler exists (the beats and claims read `schedulers` only then).
 * - (k) rate limits and holds: the queue's limit (meta `rate`) and each group's (`grate`) are
 *   `limit:periodMs` with both >= 1, and meta `grates` counts the groups that have one (absent for
 *   none), and a concurrency key's (`krate`) is the entry `#<key>`; the bound itself: no group's
 *   or the queue's log has more starts within the period before now than its limit, and one at its
 *   limit is throttled (so off the ring, see (c)); a key, on no ring, is throttled only once its
 *   rate parks a job, and its rate lowered under what it started leaves its log over the new limit
 *   (which takes nothing back), so its bound is judged at the claims (the key rates' property
 *   test); a starts log exists
 *   only for an entry with a limit, its members tokens the queue handed out (<= meta `fence`) at
 *   times no later than now; `throttled` holds groups, `*`, `!` and `#<key>` only; every hold is of a
 *   throttled entry whose score is no earlier than the hold's end. meta `rated` is a count; meta
 *   `th` is `1` once any entry is throttled (the scripts read `throttled` only then).
 * - (l) deduplication: a dedupe key (`dd:<key>`) names a `JOB:` id. One without a TTL (until the
 *   job finishes) names an existing unfinished row (pending, scheduled or active) that carries the
 *   key (`dk`) and no ttl (`dt`); one with a TTL names a row carrying the key and a `dt`, or a row
 *   that is gone (a completed row expires, or is deleted at once with keepCompletedMs 0, while its
 *   window lasts). An unfinished row with a `dk` and no `dt` is named by its key; a `dt` is an
 *   integer >= 1 beside a `dk`. Once any key or row with `dk` exists, meta `dd` is `1` (the claims,
 *   the settles and the bulk deletes read `dk` only then).
 * - (n) partitions: a generated id of a partition's (`JOB:<seq>~<i>`) is in partition `i` (the
 *   queue `<q>~<i>`) and in no other queue, partitioned or not. What holds across a partitioned
 *   queue's partitions is {@link checkPartitionedQueue}'s.
 * - (q) durable steps (docs/design/steps.md): test/step-invariants.ts says what holds.
 * - (p) generated ids: meta `ng` is `1` or absent, and while it is `1` no row's id is `JOB:<n>`
 *   (n an integer with no leading zero) with n above meta `seq`: an enqueue of generated ids alone
 *   asks for no EXISTS then (lua/includes/take_seq.lua), so such a row would be overwritten.
 * - (o) the per-minute buckets (`emq:{q}:minutes`, lua/includes/count_minute.lua): only fields
 *   `c<minute>` and `d<minute>` (minute = floor(ms / 60000), an integer), each a count >= 1; none
 *   in a minute after the server's current one; none more than 60 minutes before the newest (the
 *   first count of each minute trims them); and the key expires no later than 61 minutes after its
 *   newest minute began. So no field is ever more than 121 minutes old: a queue counted within the
 *   last minute holds none over 61 minutes old, but one idle since keeps its last hour's fields
 *   (nothing runs to trim them) until the key expires.
 */
export function findViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];

  // (e) key types
  for (const [key, type] of snap.wrongTypes) out.push(`key ${key} has type ${type}, not the keyspace's`);
  for (const key of snap.undying) out.push(`key ${key} must expire but has no TTL`);

  // (a) placement
  const places = new Map<string, Place[]>();
  const at = (id: string, place: Place): void => {
    const list = places.get(id);
    if (list) list.push(place);
    else places.set(id, [place]);
  };
  for (const id of snap.pending.keys()) at(id, { kind: 'pending' });
  for (const [group, lane] of snap.lanes) for (const id of lane.keys()) at(id, { kind: 'lane', group });
  for (const [entry, list] of snap.fifos) for (const id of list) at(id, { kind: 'fifo', entry });
  for (const id of snap.scheduled.keys()) at(id, { kind: 'scheduled' });
  for (const id of snap.active.keys()) at(id, { kind: 'active' });
  for (const id of snap.dead.keys()) at(id, { kind: 'dead' });
  for (const id of snap.waiting.keys()) at(id, { kind: 'waiting' });
  for (const id of awaitingIds(snap)) at(id, { kind: 'awaiting' });
  for (const id of cancelledIndex(snap).keys()) at(id, { kind: 'cancelled' });
  for (const [key, ids] of parkedIndex(snap)) for (const id of ids) at(id, { kind: 'parked', key });

  const ids = new Set<string>([...places.keys(), ...snap.rows.keys()]);
  for (const id of [...ids].sort()) {
    const row = snap.rows.get(id);
    const found = places.get(id) ?? [];
    if (!id.startsWith('JOB:')) out.push(`${id}: not a JOB: id`);
    if (row && !STATES.has(row.s ?? '')) out.push(`${id}: row state ${JSON.stringify(row.s)} is not a job state`);
    if (found.length > 1) {
      out.push(`${id}: in ${found.length} places at once: ${found.map(placeName).join(', ')}`);
      continue;
    }
    const place = found[0];
    if (!place) {
      if (row && row.s !== 'completed') out.push(`${id}: in no set, but its row says ${JSON.stringify(row.s)}`);
      continue;
    }
    if (!row) {
      out.push(`${id}: in ${placeName(place)} but has no row`);
      continue;
    }
    if (row.s !== STATE_OF[place.kind]) {
      out.push(`${id}: in ${placeName(place)} but its row says ${JSON.stringify(row.s)}`);
    }
    if (place.kind === 'lane' && row.g !== place.group) {
      out.push(`${id}: in lane:${place.group} but its row has group ${JSON.stringify(row.g)}`);
    }
    if (place.kind === 'pending' && row.g !== undefined) {
      out.push(`${id}: in pending (ungrouped) but its row has group ${JSON.stringify(row.g)}`);
    }
    if (place.kind === 'fifo' && (row.g ?? UNGROUPED) !== place.entry) {
      out.push(`${id}: in ${placeName(place)} but its row has group ${JSON.stringify(row.g)}`);
    }
    if (place.kind === 'fifo') {
      if (row.o === undefined) out.push(`${id}: in ${placeName(place)} but its row has no order`);
      if (row.t !== undefined) out.push(`${id}: in ${placeName(place)} but claimed before (t ${row.t})`);
      if (row.p !== undefined) out.push(`${id}: in ${placeName(place)} but has priority ${row.p}`);
      const bad = row.o === undefined ? undefined : badOrder(Number(row.o), row.p);
      if (bad !== undefined) out.push(`${id}: in ${placeName(place)}: its row's ${bad}`);
    }
    // (f) order
    if (place.kind === 'pending' || place.kind === 'lane') {
      const score = place.kind === 'pending' ? snap.pending.get(id) : snap.lanes.get(place.group)?.get(id);
      if (row.o !== undefined && score !== Number(row.o)) {
        out.push(`${id}: claimable with score ${String(score)} but its row's order is ${JSON.stringify(row.o)}`);
      }
      if (row.o === undefined && row.t !== undefined) {
        out.push(`${id}: claimable and claimed before (t ${row.t}) but its row has no order`);
      }
      const bad = badOrder(score ?? Number.NaN, row.p);
      if (bad !== undefined) out.push(`${id}: claimable with score ${String(score)}: ${bad}`);
    }
  }
  for (const [entry, list] of snap.fifos) {
    for (let i = 1; i < list.length; i++) {
      const before = Number(snap.rows.get(list[i - 1]!)?.o);
      const after = Number(snap.rows.get(list[i]!)?.o);
      if (!(before < after)) out.push(`fifo ${entry}: ${list[i - 1]} (order ${before}) before ${list[i]} (order ${after})`);
    }
  }
  for (const [id, row] of [...snap.rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.s !== 'scheduled' && row.t === undefined) continue;
    if (row.o === undefined) {
      out.push(`${id}: ${row.t === undefined ? 'scheduled' : `claimed (t ${row.t})`} but its row has no order`);
      continue;
    }
    const bad = badOrder(Number(row.o), row.p);
    if (bad !== undefined) out.push(`${id}: its row's ${bad}`);
  }

  // (g) finished rows: the completed index names every completed row, at its finish time
  for (const [id, row] of [...snap.rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.s !== 'completed') continue;
    const at = snap.completed.get(id);
    if (at === undefined) out.push(`${id}: completed but not in the completed index`);
    else if (at !== Number(row.f)) out.push(`${id}: in the completed index at ${at} but finished at ${JSON.stringify(row.f)}`);
  }
  for (const field of ['dage', 'dmax', 'retried', 'stalled']) {
    const value = snap.meta[field];
    if (value !== undefined && !isCount(value)) out.push(`meta ${field} holds ${JSON.stringify(value)}, not a count`);
  }

  // (b) group active counts
  const counted = new Map<string, number>();
  for (const id of snap.active.keys()) {
    const g = snap.rows.get(id)?.g;
    if (g !== undefined) counted.set(g, (counted.get(g) ?? 0) + 1);
  }
  for (const g of new Set([...counted.keys(), ...Object.keys(snap.gactive)])) {
    const stored = snap.gactive[g];
    if (stored !== undefined && !isCount(stored)) {
      out.push(`group ${g}: gactive holds ${JSON.stringify(stored)}, not a count`);
      continue;
    }
    if (stored !== undefined && Number(stored) === 0) out.push(`group ${g}: gactive holds ${JSON.stringify(stored)}, where a count of 0 is deleted`);
    const want = counted.get(g) ?? 0;
    if (Number(stored ?? '0') !== want) {
      out.push(`group ${g}: gactive says ${stored ?? '(absent)'} but ${want} of its jobs are active`);
    }
  }
  for (const [g, limit] of Object.entries(snap.glimit)) {
    if (!isCount(limit)) out.push(`group ${g}: glimit holds ${JSON.stringify(limit)}, not a count`);
  }

  // (c) the ring
  const onRing = new Map<string, number>();
  for (const entry of snap.ring) onRing.set(entry, (onRing.get(entry) ?? 0) + 1);
  for (const [entry, times] of onRing) {
    if (times > 1) out.push(`ring: ${entry} is on the ring ${times} times`);
    if (!serviceable(snap, entry)) out.push(`ring: ${entry} is on the ring but not serviceable (${why(snap, entry)})`);
  }
  for (const entry of new Set([UNGROUPED, ...snap.lanes.keys(), ...snap.fifos.keys()])) {
    if (!onRing.has(entry) && serviceable(snap, entry)) out.push(`ring: ${entry} is serviceable but not on the ring`);
  }

  // (d) the bells
  for (const [bell, tokens] of new Map([['wake', snap.wake], ...snap.bells])) {
    if (tokens.length > WAKE_CAP) out.push(`${bell}: ${tokens.length} tokens, over the cap of ${WAKE_CAP}`);
    const bad = tokens.filter((t) => t !== '1');
    if (bad.length > 0) out.push(`${bell}: tokens other than '1': ${JSON.stringify(bad)}`);
  }

  // (e) every lane's group is known
  for (const g of new Set([...snap.lanes.keys(), ...[...snap.fifos.keys()].filter((e) => e !== UNGROUPED)])) {
    if (!snap.groups.has(g)) out.push(`group ${g}: has a lane but is not in groups`);
  }

  // (g) trace context
  for (const [id, row] of snap.rows) {
    if (row.x === undefined) continue;
    const context = parseTraceparent(row.x);
    if (!context || formatTraceparent(context) !== row.x) out.push(`${id}: its row's traceparent ${JSON.stringify(row.x)} is not a W3C traceparent`);
  }

  // (h) results and progress
  for (const [id, row] of [...snap.rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.r !== undefined) {
      if (row.s !== 'completed') out.push(`${id}: a result (r) on a ${JSON.stringify(row.s)} row`);
      if (!isJson(row.r)) out.push(`${id}: its result (r) is not JSON: ${JSON.stringify(row.r.slice(0, 40))}`);
    }
    if (row.pg !== undefined) {
      if (!isJson(row.pg)) out.push(`${id}: its progress (pg) is not JSON: ${JSON.stringify(row.pg.slice(0, 40))}`);
      const bytes = Buffer.byteLength(row.pg);
      if (bytes > MAX_PROGRESS_BYTES) out.push(`${id}: its progress (pg) is ${bytes} bytes, over ${MAX_PROGRESS_BYTES}`);
      if (row.t === undefined) out.push(`${id}: progress (pg) on a row never claimed`);
    }
  }

  // (i) the events stream
  out.push(...eventsViolations(snap));

  // (j) schedulers
  out.push(...schedulerViolations(snap));

  // (k) rate limits and holds
  out.push(...rateViolations(snap));

  // (m) flows
  out.push(...flowViolations(snap));

  // (l) deduplication
  out.push(...dedupeViolations(snap));

  // (n) partitions
  out.push(...partitionIdViolations(snap));

  // (o) the per-minute buckets
  out.push(...minuteViolations(snap));

  // (p) generated ids
  out.push(...generatedIdViolations(snap));

  // (q) durable steps
  out.push(...stepViolations(snap));

  // (r) cancel
  out.push(...cancelViolations(snap));

  // (s) expiry
  out.push(...expiryViolations(snap));

  // (t) concurrency keys
  out.push(...keyViolations(snap));

  return out;
}

/** The violations of (p), generated ids (see findViolations). */
function generatedIdViolations(snap: QueueSnapshot): string[] {
  const flag = snap.meta.ng;
  if (flag === undefined) return [];
  if (flag !== '1') return [`meta ng holds ${JSON.stringify(flag)}, not 1`];
  const seq = Number(snap.meta.seq ?? '0');
  const out: string[] = [];
  for (const id of snap.rows.keys()) {
    const m = /^JOB:([1-9]\d*)$/.exec(id);
    if (m && Number(m[1]) > seq) out.push(`meta ng is 1 while row ${id} is numbered above seq ${seq}: a generated id may overwrite it`);
  }
  return out;
}

/** How far a TTL read in the snapshot may run past the expiry it was set to (ms): the script's own clock. */
const TTL_SLACK_MS = 1000;

/** The violations of (o), the per-minute buckets (see findViolations). */
function minuteViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  if (snap.minutes === undefined) return out;
  const now = Math.floor(snap.now / 60_000);
  const at = new Map<string, number>();
  for (const [field, value] of Object.entries(snap.minutes.fields)) {
    if (!/^[cd](0|[1-9]\d*)$/.test(field)) {
      out.push(`minutes: field ${JSON.stringify(field)} is not c<minute> or d<minute>`);
      continue;
    }
    at.set(field, Number(field.slice(1)));
    if (!/^[1-9]\d*$/.test(value)) out.push(`minutes: ${field} holds ${JSON.stringify(value)}, not a count >= 1`);
    if (Number(field.slice(1)) > now) out.push(`minutes: ${field} is after the server's minute ${now}`);
  }
  if (at.size === 0) return out;
  const newest = Math.max(...at.values());
  for (const [field, minute] of at) {
    if (minute < newest - 60) out.push(`minutes: ${field} is ${newest - minute} minutes before the newest (${newest}), over 60: not trimmed`);
  }
  const expiresAt = snap.now + snap.minutes.pttl;
  if (snap.minutes.pttl === -1) out.push('minutes: the key has no TTL');
  else if (expiresAt > (newest + 61) * 60_000 + TTL_SLACK_MS) out.push(`minutes: the key expires at ${expiresAt}, after ${(newest + 61) * 60_000} (61 minutes after its newest minute ${newest} began)`);
  return out;
}

/** The violations of (n): each generated id of a partition's in that partition (see findViolations). */
function partitionIdViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  const partition = parsePartitionName(snap.queue);
  for (const id of snap.rows.keys()) {
    const generated = PARTITION_JOB_ID.exec(id);
    if (!generated) continue;
    if (!partition) out.push(`job ${id}: a partition's generated id in ${snap.queue}, which is no partition`);
    else if (Number(generated[2]) !== partition.index) out.push(`job ${id}: generated by partition ${generated[2]}, held by partition ${partition.index}`);
  }
  return out;
}

const UNFINISHED = new Set(['pending', 'scheduled', 'active']);

/** The violations of (l), the dedupe keys and the rows holding them (see findViolations). */
const CHILD_RECORD = /^\d+\|[wpcdfkx]\|/s;
const OUTBOX_UP = /^u\|([A-Za-z0-9._-]+)\|(JOB:[^|]+)\|([A-Za-z0-9._-]+)\|(JOB:[^|]+)\|[fir]\|\d+\|[cdpx]\|/s;
const OUTBOX_DOWN = /^r\|([A-Za-z0-9._-]+)\|(JOB:[^|]+)\|([A-Za-z0-9._-]+)\|(JOB:[^|]+)$/;
const PARENT_REF = /^[A-Za-z0-9._-]+\|JOB:[^|,]+\|[firw]$/;

/**
 * (m) Flows within one queue (docs/design.md, "Flows"): a waiting parent's row counts its
 * children (`fw`) and the finished ones (`fd`) as its children hash does, and has not all of them
 * finished (it would have been released); a parent failed by a child (`fx`) records that child as
 * having failed it; a children hash without a parent row is news for a parent not yet written and
 * expires; rows' `fp`, the records and the outbox entries are well formed, and the outbox's
 * entries are about this queue's jobs. Once any row carries a flow link (`fp` or `fw`), meta `fl`
 * is `1` (the claims, the settles and the bulk deletes read the links only then). testFlowLinks
 * (test/flow-links.ts) checks the links across queues.
 */
function flowViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  for (const [id, row] of snap.rows) {
    if (row.fp !== undefined && !PARENT_REF.test(row.fp)) out.push(`${id}: malformed flow parent ${JSON.stringify(row.fp)}`);
    if (row.fw === undefined) {
      if (row.s === 'waiting') out.push(`${id}: waiting but not a flow parent (no fw)`);
      continue;
    }
    const kids = snap.kids.get(id);
    if (row.s !== 'waiting' && row.s !== 'dead') continue;
    if (!kids) {
      out.push(`${id}: a ${row.s} flow parent without its children hash`);
      continue;
    }
    if (kids.expires) out.push(`${id}: a ${row.s} flow parent's children hash expires`);
    const records = Object.values(kids.fields);
    const done = records.filter((v) => /^\d+\|[cdf]\|/.test(v)).length;
    if (Number(row.fw) !== records.length) out.push(`${id}: fw ${row.fw} but ${records.length} children recorded`);
    if (Number(row.fd) !== done) out.push(`${id}: fd ${row.fd} but ${done} children finished`);
    if (row.s === 'waiting' && done >= records.length) out.push(`${id}: waiting with every child finished (${done} of ${records.length})`);
    if (row.s === 'waiting' && row.fx !== undefined) out.push(`${id}: waiting but marked failed by ${row.fx}`);
    if (row.s === 'dead' && row.fx !== undefined && !/^\d+\|f\|/.test(kids.fields[row.fx] ?? '')) {
      out.push(`${id}: dead by child ${row.fx}, whose record ${JSON.stringify(kids.fields[row.fx])} did not fail it`);
    }
  }
  for (const [id, kids] of snap.kids) {
    if (!snap.rows.has(id) && !kids.expires) out.push(`kids:${id}: news for a parent not written, without a TTL`);
    for (const [field, value] of Object.entries(kids.fields)) {
      if (!CHILD_RECORD.test(value)) out.push(`kids:${id}: malformed record ${JSON.stringify(value)} of ${field}`);
      if (!/^[A-Za-z0-9._-]+\|JOB:/.test(field)) out.push(`kids:${id}: malformed child ${JSON.stringify(field)}`);
    }
  }
  // the claims and settles read a row's flow links only under meta `fl` (lua/includes/queue_meta.lua)
  const linked = [...snap.rows].filter(([, row]) => row.fp !== undefined || row.fw !== undefined).map(([id]) => id);
  if (linked.length > 0 && snap.meta.fl !== '1') out.push(`meta fl is ${JSON.stringify(snap.meta.fl ?? null)} while ${linked[0]} carries flow links`);
  if (snap.meta.fl !== undefined && snap.meta.fl !== '1') out.push(`meta fl holds ${JSON.stringify(snap.meta.fl)}, not 1`);
  // the beat reads the outbox only under meta `fl` too
  if (snap.outbox.size > 0 && snap.meta.fl !== '1') out.push(`meta fl is ${JSON.stringify(snap.meta.fl ?? null)} while the outbox holds ${snap.outbox.size} entries`);
  for (const entry of snap.outbox.keys()) {
    const up = OUTBOX_UP.exec(entry);
    const down = OUTBOX_DOWN.exec(entry);
    if (up ? up[1] !== snap.queue : down ? down[1] !== snap.queue : true) out.push(`outbox: an entry not of this queue's: ${JSON.stringify(entry.slice(0, 200))}`);
  }
  return out;
}

function dedupeViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  for (const [key, { id, expires }] of [...snap.dedupe].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!id.startsWith('JOB:')) {
      out.push(`dedupe key ${JSON.stringify(key)}: names ${JSON.stringify(id)}, not a JOB: id`);
      continue;
    }
    const row = snap.rows.get(id);
    if (!row) {
      if (!expires) out.push(`dedupe key ${JSON.stringify(key)}: names ${id}, which has no row, and has no TTL`);
      continue;
    }
    if (row.dk !== key) out.push(`dedupe key ${JSON.stringify(key)}: names ${id}, whose row carries ${JSON.stringify(row.dk)}`);
    if (expires && row.dt === undefined) out.push(`dedupe key ${JSON.stringify(key)}: expires, but the row of ${id} holds it until finished (no dt)`);
    if (!expires && row.dt !== undefined) out.push(`dedupe key ${JSON.stringify(key)}: has no TTL, but the row of ${id} holds it for ${row.dt} ms`);
    if (!expires && !UNFINISHED.has(row.s ?? '')) out.push(`dedupe key ${JSON.stringify(key)}: held until finished by ${id}, which is ${JSON.stringify(row.s)}`);
  }
  let holders = 0;
  for (const [id, row] of [...snap.rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.dk === undefined) {
      if (row.dt !== undefined) out.push(`${id}: a dedupe ttl (dt) without a key (dk)`);
      continue;
    }
    holders++;
    if (row.dt !== undefined && !(isCount(row.dt) && Number(row.dt) >= 1)) out.push(`${id}: its dedupe ttl (dt) ${JSON.stringify(row.dt)} is not an integer >= 1`);
    if (row.dt === undefined && UNFINISHED.has(row.s ?? '') && snap.dedupe.get(row.dk)?.id !== id) {
      out.push(`${id}: ${JSON.stringify(row.s)} and holds dedupe key ${JSON.stringify(row.dk)} until finished, but the key names ${JSON.stringify(snap.dedupe.get(row.dk)?.id ?? null)}`);
    }
  }
  if ((holders > 0 || snap.dedupe.size > 0) && snap.meta.dd !== '1') out.push(`meta dd is ${JSON.stringify(snap.meta.dd ?? null)} while dedupe keys are held`);
  if (snap.meta.dd !== undefined && snap.meta.dd !== '1') out.push(`meta dd holds ${JSON.stringify(snap.meta.dd)}, not 1`);
  return out;
}

/** The violations of (i), the events stream and its settings (see findViolations). */
function eventsViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  const { ecap, erb } = snap.meta;
  if (ecap !== undefined && !(isCount(ecap) && Number(ecap) <= MAX_EVENTS_MAX_LEN)) out.push(`meta ecap holds ${JSON.stringify(ecap)}, not a cap from 0 to ${MAX_EVENTS_MAX_LEN}`);
  if (erb !== undefined && !(isCount(erb) && Number(erb) <= MAX_EVENT_RESULT_BYTES)) out.push(`meta erb holds ${JSON.stringify(erb)}, not a size from 0 to ${MAX_EVENT_RESULT_BYTES}`);
  const cap = ecap === undefined ? DEFAULT_EVENTS_SETTINGS.maxLen : Number(ecap);
  const stream = snap.events;
  if (stream === undefined) return out;
  if (cap === 0) out.push(`events: the stream exists (${stream.length} entries) with events off (cap 0)`);
  else if (stream.length > cap + snap.eventsSlack) {
    out.push(`events: ${stream.length} entries, over the cap of ${cap} and the ${snap.eventsSlack} MAXLEN ~ may leave past it`);
  }
  for (const { id, fields } of stream) {
    const { events, skipped } = decodeEntry(id, fields);
    if (skipped > 0) out.push(`events: entry ${id} holds ${skipped} event(s) the decoder cannot read: ${JSON.stringify(fields.slice(0, 12))}`);
    const total = events.length + skipped;
    if (total < 1 || total > EVENTS_PER_ENTRY) out.push(`events: entry ${id} holds ${total} events, not 1 to ${EVENTS_PER_ENTRY}`);
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (fields[i] === 'j' && !fields[i + 1]!.startsWith('JOB:')) out.push(`events: entry ${id} names ${JSON.stringify(fields[i + 1])}, not a JOB: id`);
    }
  }
  return out;
}

/**
 * A sticky feature flag of meta (`sc`, `th`: lua/includes/queue_meta.lua): `1` or absent, and `1`
 * while `present` keys it guards exist, since the scripts read those keys only under it.
 */
function featureFlagViolations(snap: QueueSnapshot, flag: 'sc' | 'th', present: number, what: string): string[] {
  const value = snap.meta[flag];
  if (value !== undefined && value !== '1') return [`meta ${flag} holds ${JSON.stringify(value)}, not 1`];
  if (present > 0 && value !== '1') return [`meta ${flag} is ${JSON.stringify(value ?? null)} while ${present} ${what}`];
  return [];
}

/** The violations of (j), the schedulers (see findViolations). */
function schedulerViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  if (snap.meta.fired !== undefined && !isCount(snap.meta.fired)) out.push(`meta fired holds ${JSON.stringify(snap.meta.fired)}, not a count`);
  out.push(...featureFlagViolations(snap, 'sc', snap.schedulers.size, 'schedulers exist'));
  for (const id of snap.schedulers.keys()) if (!snap.schedulerRows.has(id)) out.push(`scheduler ${id}: in schedulers without a row`);
  for (const [id, row] of snap.schedulerRows) {
    const score = snap.schedulers.get(id);
    if (score === undefined) {
      out.push(`scheduler ${id}: a row not in schedulers`);
      continue;
    }
    for (const field of ['v', 'f', 'p', 'c', 'u'] as const) {
      if (!isCount(row[field])) out.push(`scheduler ${id}: ${field} holds ${JSON.stringify(row[field])}, not a count`);
    }
    if (!isCount(row.ma) || Number(row.ma) < 1) out.push(`scheduler ${id}: maxAttempts (ma) holds ${JSON.stringify(row.ma)}`);
    if (row.d === undefined || !isJson(row.d)) out.push(`scheduler ${id}: its payload (d) is not JSON`);
    if (row.b === undefined || !/^[fe],\d+,\d+,[\d.]+$/.test(row.b)) out.push(`scheduler ${id}: its backoff (b) holds ${JSON.stringify(row.b)}`);
    const spec = parseStoredSpec(row.k ?? '');
    if (!spec) out.push(`scheduler ${id}: its spec (k) is not a spec: ${JSON.stringify(row.k)}`);
    else {
      if ((spec.limit ?? -1) !== (row.m === undefined ? -1 : Number(row.m))) out.push(`scheduler ${id}: its limit (m) ${JSON.stringify(row.m)} is not its spec's`);
      if (spec.every !== undefined && !isCount(row.an)) out.push(`scheduler ${id}: an every spec without its anchor (an)`);
    }
    if (row.n === undefined) {
      if (score !== Infinity) out.push(`scheduler ${id}: fires no more (no n) but is at ${score} in schedulers, not +inf`);
    } else if (Number(row.n) !== score) out.push(`scheduler ${id}: its next slot n ${row.n} is not its score ${score} in schedulers`);
    if (row.m !== undefined && isCount(row.f) && Number(row.f) > Number(row.m)) out.push(`scheduler ${id}: fired ${row.f} times, over its limit ${row.m}`);
    if (row.m !== undefined && Number(row.f) >= Number(row.m) && row.n !== undefined) out.push(`scheduler ${id}: reached its limit ${row.m} with a next slot`);
    if (row.l !== undefined && row.n !== undefined && Number(row.n) <= Number(row.l)) out.push(`scheduler ${id}: its next slot ${row.n} is not after its last ${row.l}`);
    if (Number(row.f) > 0 && row.l === undefined) out.push(`scheduler ${id}: fired ${row.f} times without a last slot (l)`);
  }
  // a job fired by a scheduler as it is now (made no later than the job) was for a slot it fired
  for (const [jobId, row] of snap.rows) {
    const by = firedBy(jobId);
    const scheduler = by && snap.schedulerRows.get(by.id);
    if (!by || !scheduler || Number(row.c) < Number(scheduler.c)) continue;
    if (scheduler.l === undefined || by.slot > Number(scheduler.l)) out.push(`${jobId}: fired for slot ${by.slot}, after its scheduler's last slot ${scheduler.l ?? '(none)'}`);
  }
  return out;
}

/** The violations of (k), the rate limits and holds (see findViolations). */
function rateViolations(snap: QueueSnapshot): string[] {
  const out: string[] = [];
  const RATE = /^([1-9]\d*):([1-9]\d*)$/;
  const limits = new Map<string, { limit: number; period: number }>();
  const read = (entry: string, text: string | undefined, what: string): void => {
    if (text === undefined) return;
    const m = RATE.exec(text);
    if (!m) out.push(`${what} holds ${JSON.stringify(text)}, not limit:periodMs`);
    else limits.set(entry, { limit: Number(m[1]), period: Number(m[2]) });
  };
  read(QUEUE_ENTRY, snap.meta.rate, 'meta rate');
  for (const [g, text] of Object.entries(snap.grate)) read(g, text, `group ${g}: its rate limit`);
  // a concurrency key's rate is the entry '#<key>' (its starts log emq:{q}:starts:#<key>)
  for (const [k, text] of Object.entries(keyRates(snap))) read(`#${k}`, text, `key ${k}: its rate limit`);
  const grates = Object.keys(snap.grate).length;
  if ((snap.meta.grates === undefined ? 0 : Number(snap.meta.grates)) !== grates) out.push(`meta grates holds ${JSON.stringify(snap.meta.grates)} but ${grates} groups have a rate limit`);
  if (snap.meta.rated !== undefined && !isCount(snap.meta.rated)) out.push(`meta rated holds ${JSON.stringify(snap.meta.rated)}, not a count`);
  out.push(...featureFlagViolations(snap, 'th', snap.throttled.size, 'entries are throttled'));
  const fence = Number(snap.meta.fence ?? '0');
  for (const [entry, log] of snap.starts) {
    const rate = limits.get(entry);
    if (!rate) {
      out.push(`starts log of ${entry} without a rate limit`);
      continue;
    }
    let inWindow = 0;
    for (const [token, at] of log) {
      if (!isCount(token) || Number(token) > fence) out.push(`starts log of ${entry}: ${token} is not a token handed out`);
      if (at > snap.now) out.push(`starts log of ${entry}: a start at ${at}, after now ${snap.now}`);
      if (at > snap.now - rate.period) inWindow++;
    }
    // a key's rate lowered under what it started leaves a log over it, and a key is throttled only
    // once its rate parks a job: its bound is judged at the claims (the key rates' property test)
    if (inWindow > rate.limit && !entry.startsWith('#')) out.push(`${entry}: ${inWindow} starts within ${rate.period} ms, over its limit ${rate.limit}`);
    // a key at its rate is throttled only once a job waits for it (its claim parks the job): it is on no ring
    if (inWindow >= rate.limit && !snap.throttled.has(entry) && !entry.startsWith('#')) out.push(`${entry}: at its rate limit (${inWindow} starts) but not throttled`);
  }
  for (const entry of snap.throttled.keys()) {
    if (entry !== QUEUE_ENTRY && entry !== UNGROUPED && !/^[A-Za-z0-9._-]{1,128}$/.test(entry) && !/^#[A-Za-z0-9._:-]{1,128}$/.test(entry)) out.push(`throttled holds ${JSON.stringify(entry)}, not an entry`);
  }
  for (const [entry, until] of Object.entries(snap.holds)) {
    const score = snap.throttled.get(entry);
    if (!isCount(until)) out.push(`hold of ${entry} holds ${JSON.stringify(until)}, not a time`);
    else if (score === undefined) out.push(`${entry}: held until ${until} but not throttled`);
    else if (score < Number(until)) out.push(`${entry}: held until ${until} but throttled only until ${score}`);
  }
  return out;
}

/** Whether `text` parses as JSON. */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Why `entry` is not serviceable, for a violation's message. */
function why(snap: QueueSnapshot, entry: string): string {
  if (claimable(snap, entry) === 0) return entry === UNGROUPED ? 'pending is empty' : 'its lane is empty';
  if (snap.throttled.has(entry)) return `it is throttled until ${snap.throttled.get(entry)}`;
  if (snap.gpaused.has(entry)) return 'the group is paused';
  return `gactive ${snap.gactive[entry] ?? '0'} >= limit ${snap.glimit[entry] ?? '?'}`;
}

/**
 * Reads the whole keyspace of queue `queueName` (atomically, see {@link snapshotQueue}) and
 * returns every invariant violation (see {@link findViolations} for the list of checks). An empty
 * array means the queue's state is consistent.
 *
 * @param raw an ioredis client (RESP2) connected to the queue's Redis
 * @param queueName the queue's name, e.g. `queue.name`
 * @returns violations as readable sentences, `[]` when none
 *
 * @example
 * expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
 */
export async function checkInvariants(raw: Redis, queueName: string): Promise<string[]> {
  return findViolations(await snapshotQueue(raw, queueName));
}

/** What the registry and the keyspace hold of one partitioned queue's name (see {@link checkPartitionedQueue}). */
export interface PartitionsSnapshot {
  /** The queue's name (not a partition's). */
  readonly queue: string;
  /** Whether `emq:queues` names it. */
  readonly registered: boolean;
  /** Its count in `{emq:queues}:partitions` as stored, null when the hash has none. */
  readonly count: string | null;
  /** The hash tags of keys `emq:{<queue>~...}:*`: each partition's name that has keys, and anything else of that shape. */
  readonly partitionTags: ReadonlySet<string>;
  /** Keys under the queue's own name (`emq:{<queue>}:*`). */
  readonly ownKeys: readonly string[];
}

/** Reads what {@link PartitionsSnapshot} holds of queue `queueName` (on a cluster, `raw.keys` must ask every master: rawClient's does). */
export async function snapshotPartitions(raw: Redis, queueName: string): Promise<PartitionsSnapshot> {
  const [registered, count, partitionKeys, ownKeys] = await Promise.all([
    raw.sismember('emq:queues', queueName),
    raw.hget(PARTITIONS_REGISTRY, queueName),
    raw.keys(`emq:{${queueName}~*}:*`),
    raw.keys(`emq:{${queueName}}:*`),
  ]);
  const partitionTags = new Set(partitionKeys.map((key) => /^emq:\{([^}]*)\}:/.exec(key)?.[1] ?? key));
  return { queue: queueName, registered: registered === 1, count, partitionTags, ownKeys };
}

/**
 * The violations of a partitioned queue's registry record and keys, not of its partitions'
 * keyspaces (those are each partition's own: {@link checkPartitionedQueue} runs both):
 *
 * - the registry's count for the name is an integer from 1 to MAX_PARTITIONS, and `emq:queues`
 *   names the queue (register-queue writes both in one script);
 * - every partition with keys is `<queue>~<i>` with `i` (no leading zero) below the count;
 * - no key lives under the partitioned name itself: its jobs are all in its partitions.
 */
export function findPartitionViolations(snap: PartitionsSnapshot): string[] {
  const out: string[] = [];
  const count = snap.count === null ? undefined : Number(snap.count);
  if (snap.count === null) out.push(`queue ${snap.queue}: no count in ${PARTITIONS_REGISTRY}`);
  else if (!/^[1-9]\d*$/.test(snap.count) || count! > MAX_PARTITIONS) out.push(`queue ${snap.queue}: count ${snap.count} in ${PARTITIONS_REGISTRY} is no count of partitions (1 to ${MAX_PARTITIONS})`);
  if (snap.count !== null && !snap.registered) out.push(`queue ${snap.queue}: counted in ${PARTITIONS_REGISTRY} but not in emq:queues`);
  for (const tag of snap.partitionTags) {
    const partition = parsePartitionName(tag);
    if (!partition || partition.queue !== snap.queue) out.push(`keys of {${tag}}: no partition's name`);
    else if (count !== undefined && partition.index >= count) out.push(`partition ${tag} has keys, past the ${count} partitions of ${snap.queue}`);
  }
  if (snap.count !== null && snap.ownKeys.length > 0) out.push(`queue ${snap.queue} is partitioned but has keys of its own: ${snap.ownKeys.slice(0, 3).join(', ')}`);
  return out;
}

/**
 * Every violation of partitioned queue `queueName`: its registry record and keys (see
 * {@link findPartitionViolations}), then each partition's keyspace (see {@link findViolations}),
 * each prefixed with the partition's name. Partitions are read one at a time, each atomically.
 *
 * @example
 * expect(await checkPartitionedQueue(redis.raw, queue.name)).toEqual([]);
 */
export async function checkPartitionedQueue(raw: Redis, queueName: string): Promise<string[]> {
  const snap = await snapshotPartitions(raw, queueName);
  const out = findPartitionViolations(snap);
  for (const tag of [...snap.partitionTags].sort()) {
    if (!parsePartitionName(tag)) continue;
    for (const violation of await checkInvariants(raw, tag)) out.push(`${tag}: ${violation}`);
  }
  return out;
}

/**
 * The violations of the whole partitions registry: every name with a count is a partitioned queue
 * whose record passes {@link findPartitionViolations} (its partitions' keyspaces not read).
 */
export async function checkPartitionRegistry(raw: Redis): Promise<string[]> {
  const names = Object.keys(await raw.hgetall(PARTITIONS_REGISTRY));
  const out: string[] = [];
  for (const name of names) out.push(...findPartitionViolations(await snapshotPartitions(raw, name)));
  return out;
}

/**
 * A check of the checker: `expectFlag(corrupt, repair, pattern)` corrupts queue `queueName`,
 * expects a violation matching `pattern`, repairs it, and expects the queue clean again.
 *
 * @example
 * const expectFlag = flagChecker(redis.raw, queue.name);
 * await expectFlag(() => raw.hdel(row, 'o'), () => raw.hset(row, 'o', '1'), /has no order/);
 */
export function flagChecker(
  raw: Redis,
  queueName: string,
): (corrupt: () => Promise<unknown>, repair: () => Promise<unknown>, pattern: RegExp) => Promise<void> {
  return async (corrupt, repair, pattern) => {
    await corrupt();
    const found = await checkInvariants(raw, queueName);
    expect(found.some((v) => pattern.test(v)), `wanted ${String(pattern)} in ${JSON.stringify(found)}`).toBe(true);
    await repair();
    expect(await checkInvariants(raw, queueName)).toEqual([]);
  };
}
