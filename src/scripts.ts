import { type EncodedJob } from './encode.js';
import type { EventsSettings } from './events.js';
import type { DueScheduler, EncodedSchedulerJob } from './schedulers.js';
import type { DeadRetention, EnqueueResult, JobState } from './job.js';
import type { GroupInfo, GroupsPage } from './groups.js';
import { parseRate, type RateLimit, type RateLimitsRead } from './rate-limits.js';
import { scripts, type ScriptName } from './generated/scripts.js';
import { keyspace, type Keyspace, QUEUE_REGISTRY } from './keyspace.js';
import { type LastHour, lastHourOf } from './last-hour.js';
import { PARTITIONS_REGISTRY } from './partitions.js';
import { asArray, asNumber, asRecord, asString } from './reply.js';
import { runScripts } from './run-scripts.js';
import type { BlockingTransport, Replication, Reply, ScriptCall, StreamEntry, Transport } from './transport.js';

/** A script call and how to read its reply: several can share one round trip (runOps). */
export interface ScriptOp<T> {
  readonly call: ScriptCall;
  readonly parse: (reply: Reply) => T;
}

/** A claimed job as the script returns it, payload still JSON text. */
export interface ClaimedRow {
  readonly id: string;
  readonly token: number;
  readonly payload: string;
  readonly group: string | undefined;
  /** This run's attempt, from 1 (Job.attempt). */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly createdAt: number;
  readonly leaseUntil: number;
  /** The W3C traceparent its enqueue stored (the row's `x`), when it was traced. */
  readonly traceparent: string | undefined;
  /** A flow child's parent, as its row's `fp` (`<queue>|<id>|<policy>`: src/flow.ts decodeParent). */
  readonly parent: string | undefined;
  /** A flow parent's children hash, flat (src/flow.ts decodeChildren); undefined for a job without children. */
  readonly children: string[] | undefined;
}

/** What a claim (or a beat) saw and took. */
export interface ClaimResult {
  /** The server's time when it ran (epoch ms). */
  readonly now: number;
  /** Whether the queue is paused (then nothing was claimed). */
  readonly paused: boolean;
  /**
   * The next scheduled job's due time (null for none) when fewer jobs were claimed than asked, or
   * the schedule bell had news, or it was a beat; else null.
   */
  readonly nextDueAt: number | null;
  /** The earliest lease deadline, on the same occasions as nextDueAt; else null. */
  readonly nextLeaseEnd: number | null;
  /** Due scheduled jobs a beat moved to be claimed. */
  readonly promoted: number;
  /** Expired leases a beat took back to be claimed again. */
  readonly requeued: number;
  /** Expired leases a beat sent to dead: that was their last attempt. */
  readonly buried: number;
  /** Schedulers whose slot a beat saw due, for its caller to fire (Leases does); empty otherwise. */
  readonly dueSchedulers: readonly DueScheduler[];
  /** Flow news a beat found to relay (outbox entries: docs/design.md, "Flows"); empty otherwise. */
  readonly outbox: readonly string[];
  readonly jobs: readonly ClaimedRow[];
}

/** What fire-schedulers answered. */
export interface FireResult {
  /** The server's time when it ran (epoch ms). */
  readonly now: number;
  /** The queue's next due time after the firing (a scheduled job or a scheduler's slot), null for none. */
  readonly nextDueAt: number | null;
  /** Slots fired (the rest were fenced: fired by someone else, or the scheduler changed). */
  readonly fired: number;
  /** Per scheduler asked, the id of the job its slot fired, or null when fenced. */
  readonly jobs: ReadonlyArray<string | null>;
}

/** A settle call's subject: a job and the lease token its holder got. */
export interface Held {
  /** The job's id. */
  readonly id: string;
  /** The lease token its claim handed out (`Job.token`). */
  readonly token: number;
}

/** A job to give back, and how long to hold its group after (RateLimitedError). */
export interface ReleaseItem extends Held {
  /** Hold the job's group (or the ungrouped lane) this many ms; absent or 0 for none. */
  readonly holdMs?: number | undefined;
}

/** The ring entry of ungrouped work, and what stands for the queue, in the rate scripts' ARGV. */
const UNGROUPED_ENTRY = '*';
const QUEUE_ENTRY = '!';

/** A job to settle by completing it, with its handler's result. */
export interface CompleteItem extends Held {
  /** The handler's result as JSON text, for the row's `r`; absent (or undefined) for none. */
  readonly result?: string | undefined;
}

/** A failed attempt to settle by retry. */
export interface RetryItem extends Held {
  /** The error the attempt ended with: the row keeps it as its last. */
  readonly error: string;
  /** Retry after exactly this many ms instead of the job's backoff. */
  readonly delayMs?: number;
}

/** A failed attempt to settle by failing for good. */
export interface FailItem extends Held {
  /** Why it failed for good: the row keeps it as its last error. */
  readonly error: string;
}

/** The request an enqueue belongs to: a repeat of the same key is the same enqueue. */
export interface EnqueueRequest {
  /** "" for none. */
  readonly key: string;
  readonly ttlMs: number;
  /** A caller's key (Idempotency-Key), checked against the jobs it first came with. */
  readonly callerKey: boolean;
  /** The W3C traceparent to store on each new row ("" or absent: none); enqueue.lua checks its shape. */
  readonly traceparent?: string;
}

const NO_REQUEST: EnqueueRequest = { key: '', ttlMs: 0, callerKey: false };

/** What retry did with a job. */
export type RetryOutcome = 'scheduled' | 'pending' | 'dead' | 'fenced';

const RETRY_OUTCOMES: Record<number, RetryOutcome> = { 0: 'fenced', 1: 'scheduled', 2: 'pending', 3: 'dead' };

const nullable = (value: number): number | null => (value < 0 ? null : value);

/** The names of every queue that has had a job enqueued (the registry), sorted. */
export function listQueuesOp(): ScriptOp<RegisteredQueues> {
  return {
    call: { script: scripts.listQueues, keys: [QUEUE_REGISTRY, PARTITIONS_REGISTRY], args: [] },
    parse: (reply) => {
      const [names, counts] = asArray(reply, 'listQueues');
      const flat = asArray(counts ?? [], 'partitions');
      const partitions = new Map<string, number>();
      for (let i = 0; i + 1 < flat.length; i += 2) partitions.set(asString(flat[i]!, 'queue name'), Number(asString(flat[i + 1]!, 'partitions')));
      return { names: asArray(names ?? [], 'listQueues').map((name) => asString(name, 'queue name')), partitions };
    },
  };
}

/** What the registry holds: every queue's name, sorted, and the partitioned ones' counts of partitions. */
export interface RegisteredQueues {
  readonly names: string[];
  readonly partitions: ReadonlyMap<string, number>;
}

/** What a queue records in the registry: its name, and its count of partitions (0: unpartitioned). */
export interface Registration {
  readonly queue: string;
  readonly partitions: number;
}

/** The replies of several ops: a tuple of each op's parsed type. */
export type OpResults<T extends readonly ScriptOp<unknown>[]> = { [K in keyof T]: T[K] extends ScriptOp<infer R> ? R : never };

/**
 * Runs several ops (of any queues) in one round trip, in order, and reads each reply.
 * `onRequest` counts the round trips, `replication` waits for replicas (see runScripts).
 */
export async function runOps<T extends readonly ScriptOp<unknown>[]>(
  transport: Transport,
  ops: T,
  onRequest?: () => void,
  replication?: Replication,
): Promise<OpResults<T>> {
  const replies = await runScripts(transport, ops.map((o) => o.call), onRequest, replication);
  return ops.map((o, i) => o.parse(replies[i]!)) as OpResults<T>;
}

function parseDueSchedulers(reply: Reply | undefined): DueScheduler[] {
  if (reply === undefined) return [];
  const flat = asArray(reply, 'due schedulers');
  const due: DueScheduler[] = [];
  for (let i = 0; i + 4 < flat.length; i += 5) {
    const anchor = asString(flat[i + 4], 'anchor');
    due.push({
      id: asString(flat[i], 'scheduler id'),
      revision: Number(asString(flat[i + 1], 'revision')),
      slot: Number(asString(flat[i + 2], 'slot')),
      spec: asString(flat[i + 3], 'spec'),
      anchor: anchor === '' ? -1 : Number(anchor),
    });
  }
  return due;
}

function parseClaim(reply: Reply, leaseMs: number): ClaimResult {
  const list = asArray(reply, 'claim');
  const raw = asArray(list[0], 'claim head');
  const head = raw.slice(0, 7).map((v) => asNumber(v, 'claim head'));
  const now = head[0] ?? 0;
  return {
    now,
    paused: head[1] === 1,
    nextDueAt: nullable(head[2] ?? -1),
    nextLeaseEnd: nullable(head[3] ?? -1),
    promoted: head[4] ?? 0,
    requeued: head[5] ?? 0,
    buried: head[6] ?? 0,
    dueSchedulers: parseDueSchedulers(raw[7]),
    outbox: strings(raw[8], 'beat outbox'),
    jobs: list.slice(1).map((entry) => {
      const j = asArray(entry, 'claimed job');
      const group = asString(j[3], 'group');
      return {
        id: asString(j[0], 'id'),
        token: asNumber(j[1], 'token'),
        payload: asString(j[2], 'payload'),
        group: group === '' ? undefined : group,
        attempt: asNumber(j[4], 'attempt'),
        maxAttempts: asNumber(j[5], 'maxAttempts'),
        createdAt: asNumber(j[6], 'createdAt'),
        leaseUntil: now + leaseMs,
        traceparent: j[7] == null ? undefined : asString(j[7], 'traceparent'),
        parent: j[8] == null ? undefined : asString(j[8], 'parent'),
        children: j[9] == null ? undefined : strings(j[9], 'children'),
      };
    }),
  };
}

const codes = (reply: Reply, what: string): number[] => asArray(reply, what).map((v) => asNumber(v, what));

/** A list of strings; [] for an absent reply (nil). */
function strings(reply: Reply | undefined, what: string): string[] {
  if (reply === undefined || reply === null) return [];
  return asArray(reply, what).map((v) => asString(v, what));
}

/** What a script that may write flow news answers beside its own reply: the outbox entries it wrote. */
export interface WithOutbox<T> {
  readonly value: T;
  /** Outbox entries to relay (src/flow-relay.ts); empty for a script that wrote none. */
  readonly outbox: readonly string[];
}

/**
 * The one gateway to Redis: each method builds a script's keys and arguments and reads its reply
 * into a typed value. Nothing else calls the transport. `...Op` methods return the call without
 * running it, so different scripts can share a round trip through `runOps`.
 */
export class Scripts {
  readonly keys: Keyspace;

  constructor(
    readonly transport: Transport,
    queue: string,
  ) {
    this.keys = keyspace(queue);
  }

  private op<T>(name: ScriptName, args: readonly (string | number)[], parse: (reply: Reply) => T): ScriptOp<T> {
    return { call: { script: scripts[name], keys: this.keys.fixed, args: [this.keys.prefix, ...args] }, parse };
  }

  /** Runs one op. */
  async run<T>(op: ScriptOp<T>): Promise<T> {
    const [reply] = await runScripts(this.transport, [op.call]);
    return op.parse(reply!);
  }

  /** Runs several ops in one round trip, in order; with `replication`, waits for replicas too (runScripts). */
  runOps<T extends readonly ScriptOp<unknown>[]>(ops: T, replication?: Replication): Promise<OpResults<T>> {
    return runOps(this.transport, ops, undefined, replication);
  }

  /**
   * Enqueues `jobs`; with `request`, once per key for `ttlMs`: the key again answers the first
   * reply (a caller's key with other jobs is EMQCONFLICT).
   */
  enqueueOp(
    jobs: readonly EncodedJob[],
    request: EnqueueRequest = NO_REQUEST,
  ): ScriptOp<EnqueueResult[]> {
    const { key, ttlMs, callerKey, traceparent = '' } = request;
    return this.op('enqueue', [key, ttlMs, callerKey ? '1' : '0', traceparent, jobs.length, ...jobs.flat()], (reply) => {
      const list = asArray(reply, 'enqueue');
      const out: EnqueueResult[] = [];
      for (let i = 0; i < list.length; i += 2) {
        out.push({ id: asString(list[i], 'id'), state: asString(list[i + 1], 'state') as EnqueueResult['state'] });
      }
      return out;
    });
  }

  /** Claims up to `n`; with `requestKey`, the same key again answers this claim's jobs (lua/claim.lua). */
  claimOp(n: number, leaseMs: number, requestKey = ''): ScriptOp<ClaimResult> {
    return this.op('claim', [n, leaseMs, requestKey], (reply) => parseClaim(reply, leaseMs));
  }

  beatOp(options: { reapLimit: number; promoteLimit: number; n: number; leaseMs: number; requestKey?: string }): ScriptOp<ClaimResult> {
    const { reapLimit, promoteLimit, n, leaseMs, requestKey = '' } = options;
    return this.op('beat', [reapLimit, promoteLimit, n, leaseMs, requestKey], (reply) => parseClaim(reply, leaseMs));
  }

  /** Completes held jobs, each with its result ('' for none: complete.lua takes triples), and claims `claimN` after. */
  completeOp(
    held: readonly CompleteItem[],
    options: { keepMs: number; claimN?: number; leaseMs?: number; requestKey?: string },
  ): ScriptOp<{ completed: boolean[]; claimed: ClaimResult | null; outbox: string[] }> {
    const leaseMs = options.leaseMs ?? 30_000;
    return this.op(
      'complete',
      [options.keepMs, options.claimN ?? 0, leaseMs, options.requestKey ?? '', ...held.flatMap((h) => [h.id, h.token, h.result ?? ''])],
      (reply) => {
        const [done, claimed, outbox] = asArray(reply, 'complete');
        const claimList = asArray(claimed, 'complete claim');
        return {
          completed: codes(done ?? [], 'complete').map((c) => c === 1),
          claimed: claimList.length > 0 ? parseClaim(claimList, leaseMs) : null,
          outbox: strings(outbox, 'complete outbox'),
        };
      },
    );
  }

  retryOp(items: readonly RetryItem[], random: () => number = Math.random): ScriptOp<WithOutbox<RetryOutcome[]>> {
    const args = items.flatMap((i) => [i.id, i.token, i.error, i.delayMs ?? -1, random()]);
    return this.op('retry', args, (reply) => {
      const [done, outbox] = asArray(reply, 'retry');
      return { value: codes(done ?? [], 'retry').map((c) => RETRY_OUTCOMES[c] ?? 'fenced'), outbox: strings(outbox, 'retry outbox') };
    });
  }

  failOp(items: readonly FailItem[]): ScriptOp<WithOutbox<Array<'dead' | 'fenced'>>> {
    const args = items.flatMap((i) => [i.id, i.token, i.error]);
    return this.op('fail', args, (reply) => {
      const [done, outbox] = asArray(reply, 'fail');
      return { value: codes(done ?? [], 'fail').map((c): 'dead' | 'fenced' => (c === 1 ? 'dead' : 'fenced')), outbox: strings(outbox, 'fail outbox') };
    });
  }

  /**
   * Gives back held jobs never started: back to their lanes, the claim not counted; one with a
   * `holdMs` also holds its group (or the ungrouped lane) for that long.
   */
  releaseOp(held: readonly ReleaseItem[]): ScriptOp<Array<'released' | 'fenced'>> {
    const args = held.flatMap((h) => [h.id, h.token, h.holdMs ?? 0]);
    return this.op('release', args, (reply) => codes(reply, 'release').map((c) => (c === 1 ? 'released' : 'fenced')));
  }

  /** Writes `progress` (JSON text) into each held job's row: true written, false fenced off. */
  progressOp(held: readonly Held[], progress: string): ScriptOp<boolean[]> {
    const args = [progress, ...held.flatMap((h) => [h.id, h.token])];
    return this.op('progress', args, (reply) => codes(reply, 'progress').map((c) => c === 1));
  }

  extendOp(held: readonly Held[], leaseMs: number): ScriptOp<Array<number | null>> {
    const args = [leaseMs, ...held.flatMap((h) => [h.id, h.token])];
    return this.op('extend', args, (reply) => codes(reply, 'extend').map((d) => (d > 0 ? d : null)));
  }

  promoteOp(limit: number): ScriptOp<{ promoted: number; nextDueAt: number | null }> {
    return this.op('promote', [limit], (reply) => {
      const [promoted, next] = codes(reply, 'promote');
      return { promoted: promoted ?? 0, nextDueAt: nullable(next ?? -1) };
    });
  }

  reapOp(limit: number): ScriptOp<{ requeued: number; buried: number }> {
    return this.op('reap', [limit], (reply) => {
      const [requeued, buried] = codes(reply, 'reap');
      return { requeued: requeued ?? 0, buried: buried ?? 0 };
    });
  }

  pauseOp(): ScriptOp<boolean> {
    return this.op('pause', [], (reply) => asNumber(reply, 'pause') === 1);
  }

  resumeOp(): ScriptOp<boolean> {
    return this.op('resume', [], (reply) => asNumber(reply, 'resume') === 1);
  }

  pauseGroupOp(group: string): ScriptOp<boolean> {
    return this.op('pauseGroup', [group], (reply) => asNumber(reply, 'pauseGroup') === 1);
  }

  resumeGroupOp(group: string): ScriptOp<boolean> {
    return this.op('resumeGroup', [group], (reply) => asNumber(reply, 'resumeGroup') === 1);
  }

  groupLimitOp(group: string, limit: number | null): ScriptOp<void> {
    return this.op('groupLimit', [group, limit ?? -1], () => undefined);
  }

  /** Sets (or with null lifts) the rate limit of `group`, or of the queue when `group` is null. */
  setRateOp(group: string | null, rate: RateLimit | null): ScriptOp<void> {
    return this.op('setRate', [group ?? QUEUE_ENTRY, rate?.limit ?? -1, rate?.periodMs ?? 0], () => undefined);
  }

  /** The rate limits, holds and throttled entries (at most `limit` of those, earliest first). */
  rateLimitsOp(limit: number): ScriptOp<RateLimitsRead> {
    return this.op('rateLimits', [limit], (reply) => {
      const [now, queue, groups, throttled] = asArray(reply, 'rateLimits');
      const pairs = asArray(groups, 'rate limits').map((v) => asString(v, 'rate limit'));
      const rows = asArray(throttled, 'throttled').map((v) => asString(v, 'throttled'));
      const entries: Array<RateLimitsRead['throttled'][number]> = [];
      for (let i = 0; i + 2 < rows.length; i += 3) {
        entries.push({ entry: rows[i]!, until: Number(rows[i + 1]), heldUntil: rows[i + 2] === '' ? null : Number(rows[i + 2]) });
      }
      const groupRates: Array<[string, string]> = [];
      for (let i = 0; i + 1 < pairs.length; i += 2) groupRates.push([pairs[i]!, pairs[i + 1]!]);
      return { now: asNumber(now, 'now'), queue: asString(queue, 'queue rate'), groups: groupRates, throttled: entries };
    });
  }

  /**
   * One page of the queue's groups with their numbers, by SSCAN from `cursor` ("0" to start),
   * about `count` a page, only names starting with `prefix` ("" for all): lua/list-groups.lua.
   */
  listGroupsOp(cursor: string, count: number, prefix: string): ScriptOp<GroupsPage> {
    return this.op('listGroups', [cursor, count, prefix], (reply) => {
      const [next, rows] = asArray(reply, 'listGroups');
      const cursorNext = asString(next, 'listGroups cursor');
      const optional = (value: Reply | undefined, what: string): number | null => {
        const text = asString(value, what);
        return text === '' ? null : Number(text);
      };
      const groups = asArray(rows, 'listGroups rows').map((entry): GroupInfo => {
        const row = asArray(entry, 'listGroups row');
        return {
          group: asString(row[0], 'group'),
          active: asNumber(row[1], 'group active'),
          limit: optional(row[2], 'group limit'),
          rate: parseRate(asString(row[3], 'group rate')),
          paused: asNumber(row[4], 'group paused') === 1,
          heldUntil: optional(row[5], 'group heldUntil'),
          throttledUntil: optional(row[6], 'group throttledUntil'),
          waiting: asNumber(row[7], 'group lane') + asNumber(row[8], 'group arrivals'),
        };
      });
      return { groups, cursor: cursorNext === '0' ? null : cursorNext };
    });
  }

  /** Holds `group` (null: the ungrouped lane) for `ms`; answers the server time it is held until. */
  holdOp(group: string | null, ms: number): ScriptOp<number> {
    return this.op('holdGroup', [group ?? UNGROUPED_ENTRY, ms], (reply) => asNumber(reply, 'holdGroup'));
  }

  /**
   * Removes job `id`: true when there was one. With `parent` (`<queue>|<id>`), only while the row
   * is that flow parent's child, and told to no parent (a removed parent's child, src/flow-relay.ts).
   */
  removeOp(id: string, parent = ''): ScriptOp<WithOutbox<boolean>> {
    return this.op('remove', [id, parent], (reply) => {
      const [code, outbox] = asArray(reply, 'remove');
      return { value: asNumber(code, 'remove') === 1, outbox: strings(outbox, 'remove outbox') };
    });
  }

  /** 1 reprocessed, 0 no such job, -1 not dead. */
  reprocessOp(id: string): ScriptOp<WithOutbox<number>> {
    return this.op('reprocess', [id], (reply) => {
      const [code, outbox] = asArray(reply, 'reprocess');
      return { value: asNumber(code, 'reprocess'), outbox: strings(outbox, 'reprocess outbox') };
    });
  }

  /** Applies flow children's news (outbox entries of other queues) to their parents in this queue (lua/flow-apply.lua). */
  flowApplyOp(entries: readonly string[]): ScriptOp<{ applied: number; released: number }> {
    return this.op('flowApply', entries, (reply) => {
      const [applied, released] = codes(reply, 'flowApply');
      return { applied: applied ?? 0, released: released ?? 0 };
    });
  }

  /** Forgets this queue's outbox entries once relayed (lua/flow-ack.lua): how many it removed. */
  flowAckOp(entries: readonly string[]): ScriptOp<number> {
    return this.op('flowAck', entries, (reply) => asNumber(reply, 'flowAck'));
  }

  /** 1 moved, 0 no such job, -1 not pending. */
  moveGroupOp(id: string, group: string): ScriptOp<number> {
    return this.op('moveGroup', [id, group], (reply) => asNumber(reply, 'moveGroup'));
  }

  sweepGroupOp(group: string): ScriptOp<{ stored: number; counted: number }> {
    return this.op('sweepGroup', [group], (reply) => {
      const [stored, counted] = codes(reply, 'sweepGroup');
      return { stored: stored ?? 0, counted: counted ?? 0 };
    });
  }

  /**
   * The queue's counts per state, its counters, the paused flag, and its jobs completed and sent
   * to dead per minute of the last hour (lua/counts.lua).
   */
  countsOp(): ScriptOp<{
    pending: number;
    scheduled: number;
    active: number;
    dead: number;
    completed: number;
    paused: boolean;
    buried: number;
    retried: number;
    stalled: number;
    fired: number;
    rated: number;
    waiting: number;
    lastHour: LastHour;
  }> {
    return this.op('counts', [], (reply) => {
      const list = asArray(reply, 'counts');
      const [pending = 0, scheduled = 0, active = 0, dead = 0, completed = 0, paused = 0, buried = 0, retried = 0, stalled = 0, fired = 0, rated = 0, waiting = 0, minute = 0] = codes(list.slice(0, 13), 'counts');
      const lastHour = lastHourOf(minute, asRecord(list[13] ?? [], 'counts minutes'));
      return { pending, scheduled, active, dead, completed, paused: paused === 1, buried, retried, stalled, fired, rated, waiting, lastHour };
    });
  }

  /** A scheduler's row ({} when there is none) and the server's time, read together. */
  getSchedulerOp(id: string): ScriptOp<{ now: number; row: Record<string, string> }> {
    return this.op('getScheduler', [id], (reply) => {
      const [now, row] = asArray(reply, 'getScheduler');
      return { now: asNumber(now, 'now'), row: asRecord(row, 'scheduler row') };
    });
  }

  /** A page of schedulers, soonest next slot first. */
  listSchedulersOp(offset: number, limit: number): ScriptOp<Array<{ id: string; row: Record<string, string> }>> {
    return this.op('listSchedulers', [offset, limit], (reply) => {
      const flat = asArray(reply, 'listSchedulers');
      const out: Array<{ id: string; row: Record<string, string> }> = [];
      for (let i = 0; i < flat.length; i += 2) out.push({ id: asString(flat[i], 'scheduler id'), row: asRecord(flat[i + 1], 'scheduler row') });
      return out;
    });
  }

  /**
   * Writes scheduler `id`, fenced on the revision read (-1: it must not exist): the revision written
   * and the next slot stored (null: fires no more), or `{ok: false}` when the row changed meanwhile.
   */
  upsertSchedulerOp(
    id: string,
    expected: number,
    write: { spec: string; anchor: number; limit: number; nextSlot: number; job: EncodedSchedulerJob },
  ): ScriptOp<{ ok: true; revision: number; nextSlot: number | null } | { ok: false; revision: number }> {
    const { spec, anchor, limit, nextSlot, job } = write;
    const args = [id, expected, spec, anchor, limit, nextSlot, job.payload, job.group, job.priority, job.maxAttempts, job.backoff];
    return this.op('upsertScheduler', args, (reply) => {
      const [ok, revision, next] = codes(reply, 'upsertScheduler');
      return ok === 1 ? { ok: true, revision: revision ?? 0, nextSlot: nullable(next ?? -1) } : { ok: false, revision: revision ?? -1 };
    });
  }

  /** Deletes scheduler `id`: true when there was one. */
  removeSchedulerOp(id: string): ScriptOp<boolean> {
    return this.op('removeScheduler', [id], (reply) => asNumber(reply, 'removeScheduler') === 1);
  }

  /** Fires due slots, each fenced on the revision and slot read, moving each scheduler on to `next` (-1: none). */
  fireSchedulersOp(items: ReadonlyArray<{ id: string; revision: number; slot: number; next: number }>): ScriptOp<FireResult> {
    const args = [items.length, ...items.flatMap((i) => [i.id, i.revision, i.slot, i.next])];
    return this.op('fireSchedulers', args, (reply) => {
      const [now, next, fired, ...jobs] = asArray(reply, 'fireSchedulers');
      return {
        now: asNumber(now, 'now'),
        nextDueAt: nullable(asNumber(next, 'next due')),
        fired: asNumber(fired, 'fired'),
        jobs: jobs.map((j) => asString(j, 'fired job') || null),
      };
    });
  }

  /**
   * Records a queue in the registry of queues (`emq:queues`, outside the queue's slot): this one,
   * or for a partition the partitioned queue it is a part of, with its count of partitions
   * (EMQPARTITION when the registry knows the name otherwise).
   */
  registerOp(registration: Registration = { queue: this.keys.queue, partitions: 0 }): ScriptOp<boolean> {
    return {
      call: { script: scripts.registerQueue, keys: [QUEUE_REGISTRY, PARTITIONS_REGISTRY], args: [registration.queue, registration.partitions] },
      parse: (reply) => asNumber(reply, 'registerQueue') === 1,
    };
  }

  /** The row, or null when there is no such job. */
  getJobOp(id: string): ScriptOp<Record<string, string> | null> {
    return this.op('getJob', [id], (reply) => {
      const row = asRecord(reply, 'getJob');
      return Object.keys(row).length === 0 ? null : row;
    });
  }

  listDeadOp(offset: number, limit: number): ScriptOp<Array<{ id: string; row: Record<string, string> }>> {
    return this.op('listDead', [offset, limit], (reply) =>
      asArray(reply, 'listDead').map((entry) => {
        const [id, ...fields] = asArray(entry, 'listDead entry');
        return { id: asString(id, 'id'), row: asRecord(fields, 'listDead row') };
      }),
    );
  }

  // Admin in bulk (lua/list-jobs.lua ... lua/dead-retention.lua). Each bulk op is one chunk of at
  // most `n` rows; its request key makes the same chunk sent again answer what it answered.

  /** A page of the jobs in `state`, in that state's order (lua/list-jobs.lua). */
  listJobsOp(state: JobState, offset: number, limit: number): ScriptOp<Array<{ id: string; row: Record<string, string> }>> {
    return this.op('listJobs', [state, offset, limit], (reply) =>
      asArray(reply, 'listJobs').map((entry) => {
        const [id, ...fields] = asArray(entry, 'listJobs entry');
        return { id: asString(id, 'id'), row: asRecord(fields, 'listJobs row') };
      }),
    );
  }

  /** One chunk of a clean: finished rows at or before the cutoff (-1: now less `olderThanMs`). */
  cleanOp(
    state: 'completed' | 'dead',
    olderThanMs: number,
    cutoff: number,
    n: number,
    request: AdminRequest,
  ): ScriptOp<{ cutoff: number; more: boolean; ids: string[]; outbox: string[] }> {
    return this.op('clean', [state, olderThanMs, cutoff, n, request.key, request.ttlMs], (reply) => {
      const [at, more, ids, outbox] = asArray(reply, 'clean');
      return {
        cutoff: asNumber(at, 'clean cutoff'),
        more: asNumber(more, 'clean more') === 1,
        ids: asArray(ids, 'clean ids').map((id) => asString(id, 'id')),
        outbox: strings(outbox, 'clean outbox'),
      };
    });
  }

  /** One chunk of a drain, from `cursor` ("" to start); the reply's cursor is "done" at the end. */
  drainOp(n: number, cursor: string, request: AdminRequest): ScriptOp<{ deleted: number; cursor: string; outbox: string[] }> {
    return this.op('drain', [n, cursor, request.key, request.ttlMs], (reply) => {
      const [deleted, next, outbox] = asArray(reply, 'drain');
      return { deleted: asNumber(deleted, 'drain deleted'), cursor: asString(next, 'drain cursor'), outbox: strings(outbox, 'drain outbox') };
    });
  }

  /** One chunk of an obliteration: `refused` (with the active count) when jobs are active and not forced. */
  obliterateOp(force: boolean, n: number): ScriptOp<{ outcome: 'done' | 'more' | 'refused'; count: number; outbox: string[] }> {
    return this.op('obliterate', [force ? '1' : '0', n], (reply) => {
      const [code, count, outbox] = asArray(reply, 'obliterate');
      const c = asNumber(code, 'obliterate');
      return { outcome: c === 1 ? 'done' : c === 0 ? 'more' : 'refused', count: asNumber(count, 'obliterate count'), outbox: strings(outbox, 'obliterate outbox') };
    });
  }

  /** Takes queue `queue` (default this one) out of the registry of queues (`emq:queues`, outside the queue's slot). */
  unregisterOp(queue: string = this.keys.queue): ScriptOp<boolean> {
    return {
      call: { script: scripts.unregisterQueue, keys: [QUEUE_REGISTRY, PARTITIONS_REGISTRY], args: [queue] },
      parse: (reply) => asNumber(reply, 'unregisterQueue') === 1,
    };
  }

  /** One chunk of reprocessDead: up to `n` dead jobs, oldest first, back to their lanes. */
  reprocessDeadOp(n: number, request: AdminRequest): ScriptOp<{ reprocessed: number; more: boolean; outbox: string[] }> {
    return this.op('reprocessDead', [n, request.key, request.ttlMs], (reply) => {
      const [reprocessed, more, outbox] = asArray(reply, 'reprocessDead');
      return { reprocessed: asNumber(reprocessed, 'reprocessDead'), more: asNumber(more, 'reprocessDead more') === 1, outbox: strings(outbox, 'reprocessDead outbox') };
    });
  }

  /** 1 changed, 0 no such job, -1 not pending or scheduled. */
  changePriorityOp(id: string, priority: number): ScriptOp<number> {
    return this.op('changePriority', [id, priority], (reply) => asNumber(reply, 'changePriority'));
  }

  /** 1 replaced, 0 no such job, -1 not pending or scheduled. */
  updateDataOp(id: string, payload: string): ScriptOp<number> {
    return this.op('updateData', [id, payload], (reply) => asNumber(reply, 'updateData'));
  }

  /** Stores the retention of dead jobs (null: no limit of that kind) and answers it. */
  setDeadRetentionOp(maxAgeMs: number | null, maxCount: number | null): ScriptOp<DeadRetention> {
    return this.op('setDeadRetention', [maxAgeMs ?? -1, maxCount ?? -1], (reply) => parseRetention(reply, 'setDeadRetention'));
  }

  deadRetentionOp(): ScriptOp<DeadRetention> {
    return this.op('deadRetention', [], (reply) => parseRetention(reply, 'deadRetention'));
  }

  // The events stream (lua/set-events.lua, events-settings.lua, read-events.lua).

  /** Stores the events settings given (null: left as they are) and answers them all. */
  setEventsOp(maxLen: number | null, resultBytes: number | null): ScriptOp<EventsSettings> {
    return this.op('setEvents', [maxLen ?? -1, resultBytes ?? -1], (reply) => parseEventsSettings(reply, 'setEvents'));
  }

  eventsSettingsOp(): ScriptOp<EventsSettings> {
    return this.op('eventsSettings', [], (reply) => parseEventsSettings(reply, 'eventsSettings'));
  }

  /** Whole entries after entry id `after` ('0': from the start) while their events fit in `limit` (at least one). */
  readEventsOp(after: string, limit: number): ScriptOp<EventEntry[]> {
    return this.op('readEvents', [after, limit], (reply) =>
      asArray(reply, 'readEvents').map((entry) => {
        const [id, fields] = asArray(entry, 'readEvents entry');
        return { id: asString(id, 'event id'), fields: asArray(fields, 'event fields').map((f) => asString(f, 'event field')) };
      }),
    );
  }

  /** The stream's last entry id, whether events are on, and job `id`'s row ('' for none), read at one instant. */
  watchJobOp(id: string): ScriptOp<WatchStart> {
    return this.op('watchJob', [id], (reply) => {
      const [last, cap, row] = asArray(reply, 'watchJob');
      const fields = asRecord(row ?? [], 'watchJob row');
      return { last: asString(last, 'watchJob last'), eventsOn: asString(cap, 'watchJob cap') !== '0', row: Object.keys(fields).length === 0 ? null : fields };
    });
  }

  /** Whether the transport can park on the events stream (XREAD BLOCK): Node's can, an edge runtime's cannot. */
  get canBlockOnEvents(): boolean {
    return typeof (this.transport as Partial<BlockingTransport>).xread === 'function';
  }

  /**
   * Entries after `after`, at most `count`, parked up to `blockMs` for the first (XREAD BLOCK on a
   * connection of the stream's own); [] at the timeout or when `signal` aborts. Only when
   * `canBlockOnEvents`.
   */
  readEventsBlocking(after: string, count: number, blockMs: number, signal?: AbortSignal): Promise<EventEntry[]> {
    const { xread } = this.transport as Partial<BlockingTransport>;
    if (!xread) throw new Error('this transport cannot block on a stream (no xread)');
    return xread.call(this.transport, this.keys.key('events'), after, count, blockMs, signal);
  }
}

/** One entry of the events stream as XRANGE gives it: its id and its flat field-value list. */
export type EventEntry = StreamEntry;

/** Where a waiter starts (lua/watch-job.lua): the stream's last entry id, whether events are on, the job's row. */
export interface WatchStart {
  /** The stream's last entry id, `'0'` when it has none. */
  readonly last: string;
  /** False when the queue's events are off (`maxLen` 0): nothing appends to the stream. */
  readonly eventsOn: boolean;
  /** The job's row as getJob reads it, null when there is none (or no id was asked). */
  readonly row: Record<string, string> | null;
}

function parseEventsSettings(reply: Reply, what: string): EventsSettings {
  const [maxLen, resultBytes] = codes(reply, what);
  return { maxLen: maxLen ?? 0, resultBytes: resultBytes ?? 0 };
}

/** The request a chunk of a bulk admin call belongs to: the same key again answers its first reply. */
export interface AdminRequest {
  readonly key: string;
  readonly ttlMs: number;
}

function parseRetention(reply: Reply, what: string): DeadRetention {
  const [age, count] = codes(reply, what);
  return { maxAgeMs: nullable(age ?? -1), maxCount: nullable(count ?? -1) };
}
