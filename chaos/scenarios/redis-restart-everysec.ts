import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Job } from '../../src/job.js';
import { keyspace } from '../../src/keyspace.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { findRedisServer, freePort } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import { findViolations, type QueueSnapshot, snapshotQueue } from '../../test/invariants.js';
import { DurableRedis } from '../lib/durable-redis.js';
import { type CutResult, PowerCut } from '../lib/power-cut.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-everysec';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** No automatic AOF rewrite: the incremental file stays the one the cuts watch. */
const NO_REWRITE = ['--auto-aof-rewrite-percentage', '0'] as const;
/** everysec fsyncs once a second: a crash loses at most about this much of what was written. */
const FSYNC_WINDOW_MS = 1_000;
const LEASE_MS = 2_000;
/** A handler's run: short enough to prefetch (under 20 ms), long enough that a burst builds a backlog. */
const HANDLER_MS = 10;
/** After each restart the producer sends its last this many acknowledged enqueues again, keys and all. */
const RESEND = 100;

/**
 * How one kill is made. `loss`: `sigkill` is the SIGKILL alone (the page cache keeps what Redis
 * wrote, so everysec loses only writes it had postponed behind a running fsync); `cut` adds an OS
 * crash's loss, the file cut back to where it stood a second before, at the end of a whole write;
 * `torn` cuts it there in the middle of a command inside a script's MULTI/EXEC block. `when`:
 * during the `steady` stream; 100 ms after a `burst` of enqueues (within its fsync second, so the
 * burst is what a cut takes); or 1.5 s after one, while the consumer still works through the
 * `backlog` (so a cut takes claims and completions of jobs whose enqueues it keeps).
 */
interface KillPlan {
  readonly loss: 'sigkill' | 'cut' | 'torn';
  readonly when: 'steady' | 'burst' | 'backlog';
}

/**
 * A torn cut comes last: Redis 7.0 truncates a short read inside MULTI after the last whole
 * command, leaving the MULTI open, and the next load applies that half script together with the
 * next transaction (fixed in Valkey by valkey-io/valkey#4342): a Redis bug, not echomq's, that a
 * second restart would add to what this scenario measures.
 */
const QUICK_PLAN: readonly KillPlan[] = [{ loss: 'torn', when: 'backlog' }];
const FULL_PLAN: readonly KillPlan[] = [
  { loss: 'sigkill', when: 'steady' },
  { loss: 'sigkill', when: 'burst' },
  { loss: 'sigkill', when: 'backlog' },
  { loss: 'cut', when: 'steady' },
  { loss: 'cut', when: 'burst' },
  { loss: 'cut', when: 'backlog' },
  { loss: 'torn', when: 'burst' },
];

/**
 * One kill and restart, as the scenario made it. Times here and in Seen are the host's clock
 * (epoch ms): the server's clock is the same one, so a claim's server time compares with them.
 */
interface Restart {
  readonly plan: KillPlan;
  readonly killedAt: number;
  /** The new server was spawned: no reply of the killed one arrives after this. */
  readonly spawnedAt: number;
  /** It answered PING: its files were loaded. */
  readonly readyAt: number;
  readonly cut: CutResult | undefined;
  /** A copy of the files the new server loaded. */
  readonly files: string;
}

/** One job as the producer or a consumer hook saw it, and when (epoch ms). */
interface Seen {
  readonly n: number;
  readonly id: string;
  readonly token: number;
  readonly at: number;
  /** When the server made the claim (its lease end less the lease), or when the enqueue was sent. */
  readonly since: number;
}

/** An acknowledged enqueue sent again with its key after restart `restart`, and the id it got. */
interface Resend {
  readonly restart: number;
  readonly n: number;
  readonly firstId: string;
  readonly id: string;
}

/** The state one restart began from: the copy of its files, loaded by a server of its own. */
interface Reloaded {
  readonly snap: QueueSnapshot;
  /** Job rows by the payload's `n`: [id, row]. */
  readonly byN: ReadonlyMap<number, ReadonlyArray<readonly [string, Readonly<Record<string, string>>]>>;
  /** The `n` of every enqueue request key (`job-<n>`) the file kept. */
  readonly requestKeys: ReadonlySet<number>;
  readonly violations: readonly string[];
}

const nOf = (row: Readonly<Record<string, string>>): number => (JSON.parse(row.d ?? '{}') as { n: number }).n;

function byPayload(snap: QueueSnapshot): Map<number, Array<readonly [string, Readonly<Record<string, string>>]>> {
  const out = new Map<number, Array<readonly [string, Readonly<Record<string, string>>]>>();
  for (const [id, row] of snap.rows) {
    const n = nOf(row);
    const list = out.get(n);
    if (list) list.push([id, row]);
    else out.set(n, [[id, row]]);
  }
  return out;
}

/** Loads a copy of a restart's files into a redis-server of its own and reads the queue from it. */
async function reload(binary: string, files: string): Promise<Reloaded> {
  const server = new DurableRedis(binary, await freePort(), 'everysec', NO_REWRITE);
  cpSync(files, server.aofDir, { recursive: true });
  await server.start();
  const raw = new Redis(server.url);
  try {
    const snap = await snapshotQueue(raw, QUEUE);
    const prefix = `${keyspace(QUEUE).prefix}req:k:job-`;
    const requestKeys = new Set((await raw.keys(`${prefix}*`)).map((key) => Number(key.slice(prefix.length))));
    return { snap, byN: byPayload(snap), requestKeys, violations: findViolations(snap) };
  } finally {
    raw.disconnect();
    await server.stop();
  }
}

const range = (values: readonly number[]): Record<string, number> =>
  values.length === 0 ? { jobs: 0 } : { jobs: values.length, min_ms: Math.round(Math.min(...values)), max_ms: Math.round(Math.max(...values)) };

/**
 * Redis SIGKILLed and restarted under load with `appendonly yes` and `appendfsync everysec`, the
 * other half of redis-restart: a producer enqueues one job at a time with idempotency keys
 * (retrying a failure with the same key) while a parked consumer with a 2 s lease runs them;
 * Redis is killed by its PID (during the steady stream, right after a burst, or in the backlog a
 * burst leaves) and started again on its files. everysec fsyncs once a second, so an OS crash
 * loses up to a second of acknowledged writes: Redis's documented trade. A SIGKILL alone does not
 * (the page cache keeps what Redis wrote before it replied), so most kills also cut the file back
 * a second, as the crash would (PowerCut). Each restart's files are loaded again afterwards by a
 * server of their own, so every acknowledged enqueue, completion and claim is judged against the
 * exact state the restart began from.
 *
 * Reported, not promised (the trade): acknowledged enqueues that vanished, acknowledged
 * completions undone (the row back to active or pending) and what became of them, claims the
 * files lost and the settles the fences refused, how long after the restart the reaper gave the
 * jobs back, and what the rolled-back counters did (a lost job's generated id naming a later job;
 * a lost claim's lease token handed out again, for the same job). Promised even so: every
 * reloaded state and the drained queue pass the keyspace checker (a truncated AOF replays whole
 * scripts); nothing acknowledged vanishes that a cut does not explain (a request key kept without
 * its job would be one); no enqueue makes two jobs; every job that exists finishes; a completion
 * the files kept stays; a claim runs twice only when a restart's files lost it.
 */
export const redisRestartEverysec: Scenario = {
  name: 'redis-restart-everysec',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const plan = ctx.quick ? QUICK_PLAN : FULL_PLAN;
    const steadyGapMs = ctx.quick ? 2 : 1;
    const burstSize = ctx.quick ? 3_000 : 4_000;
    const started = performance.now();
    const startedAt = Date.now();
    const binary = findRedisServer();
    if (!binary) throw new Error('redis-server not found');
    const redis = new DurableRedis(binary, await freePort(), 'everysec', NO_REWRITE);
    const copies = mkdtempSync(join(tmpdir(), 'echomq-chaos-reloads-'));
    await redis.start();
    const cuts = new PowerCut(redis.incrFile());
    cuts.start();
    const transport = IoredisTransport.connect(redis.url);
    const queue = new Queue<{ n: number }>(transport, QUEUE, { keepCompletedMs: -1 });
    const seen: Observed['seen'] = { acks: [], runs: [], completions: [], fenced: [] };
    const restarts: Restart[] = [];
    const resends: Resend[] = [];
    let producerRetries = 0;
    let consumerErrors = 0;
    const record = (list: Seen[]) => (job: Job<{ n: number }>) =>
      void list.push({ n: job.payload.n, id: job.id, token: job.token, at: Date.now(), since: job.leaseUntil - LEASE_MS });
    const consumer = Consumer.connect<{ n: number }>(redis.url, QUEUE, () => sleep(HANDLER_MS), {
      concurrency: 10,
      leaseMs: LEASE_MS,
      beatMs: 500,
      queue: { keepCompletedMs: -1 },
      hooks: {
        onStarted: record(seen.runs),
        onCompleted: record(seen.completions),
        onFenced: record(seen.fenced),
        onError: () => void consumerErrors++,
      },
    }).start();
    // the producer: one enqueue at a time, a steady stream, or back to back while a burst lasts
    const load = { stop: false, burst: 0, burstDone: (): void => {} };
    const produce = (async () => {
      for (let n = 0; !load.stop; n++) {
        for (;;) {
          const sent = Date.now();
          try {
            const { id } = await queue.add({ n }, { idempotencyKey: `job-${n}` });
            seen.acks.push({ n, id, token: 0, at: Date.now(), since: sent });
            break;
          } catch {
            producerRetries++;
            if (load.stop) return;
            await sleep(50);
          }
        }
        if (load.burst > 0 && --load.burst === 0) load.burstDone();
        if (load.burst === 0) await sleep(steadyGapMs);
      }
    })();
    const burst = (size: number): Promise<void> =>
      new Promise((resolve) => {
        load.burstDone = resolve;
        load.burst = size;
      });
    try {
      for (const [k, how] of plan.entries()) {
        await sleep(how.when === 'steady' ? 1_500 : 700);
        if (how.when !== 'steady') await burst(burstSize);
        await sleep(how.when === 'burst' ? 100 : how.when === 'backlog' ? 1_500 : 0);
        const killedAt = Date.now();
        const killedAtTick = performance.now();
        await redis.kill();
        const cut = how.loss === 'sigkill' ? undefined : cuts.cut(killedAtTick, FSYNC_WINDOW_MS, how.loss === 'torn');
        const files = join(copies, `restart-${k + 1}`);
        cpSync(redis.aofDir, files, { recursive: true });
        await sleep(Math.max(0, killedAt + 300 - Date.now()));
        const spawnedAt = Date.now();
        await redis.start();
        restarts.push({ plan: how, killedAt, spawnedAt, readyAt: Date.now(), cut, files });
        // a client that never saw its replies sends its last enqueues again, with the same keys
        for (const ack of seen.acks.filter((a) => a.at < killedAt).slice(-RESEND)) {
          try {
            const { id } = await queue.add({ n: ack.n }, { idempotencyKey: `job-${ack.n}` });
            resends.push({ restart: k, n: ack.n, firstId: ack.id, id });
          } catch {
            producerRetries++;
          }
        }
      }
      // the stream runs a while past the last restart, then the queue drains
      await sleep(500);
      load.stop = true;
      await produce;
      const until = performance.now() + (ctx.quick ? 30_000 : 90_000);
      let counts = (await queue.stats()).counts;
      while (counts.pending + counts.scheduled + counts.active > 0 && performance.now() < until) {
        await sleep(200);
        counts = (await queue.stats()).counts;
      }
      await consumer.stop();
      cuts.stop();
      const raw = new Redis(redis.url);
      let final: QueueSnapshot;
      try {
        final = await snapshotQueue(raw, QUEUE);
      } finally {
        raw.disconnect();
      }
      const reloads: Reloaded[] = [];
      for (const restart of restarts) reloads.push(await reload(binary, restart.files));
      return account({ plan, seen, restarts, resends, reloads, final, producerRetries, consumerErrors, started, startedAt });
    } finally {
      load.stop = true;
      await consumer.stop();
      cuts.stop();
      await transport.close();
      await redis.stop();
      rmSync(copies, { recursive: true, force: true });
    }
  },
};

/** Everything a run saw, for the accounting. */
interface Observed {
  readonly plan: readonly KillPlan[];
  /** Acknowledged enqueues, handler runs, and the settles the consumer was told were recorded or fenced. */
  readonly seen: { readonly acks: Seen[]; readonly runs: Seen[]; readonly completions: Seen[]; readonly fenced: Seen[] };
  readonly restarts: readonly Restart[];
  readonly resends: readonly Resend[];
  readonly reloads: readonly Reloaded[];
  readonly final: QueueSnapshot;
  readonly producerRetries: number;
  readonly consumerErrors: number;
  /** performance.now() at the start, for the duration; and the clock's time then. */
  readonly started: number;
  readonly startedAt: number;
}

/** The token a row's last claim handed out (`t`, with any settle's outcome after a slash). */
const tokenOf = (row: Readonly<Record<string, string>> | undefined): number => Number.parseInt(row?.t ?? '', 10);

/**
 * Judges each acknowledged enqueue and completion against the state the next restart began from
 * (its reloaded files) and against the drained queue; each claim, by the server time it was made
 * at, against the files of the restart that followed it. A reply received before restart k's new
 * server was spawned came from the server kill k ended (no reply of a killed server arrives after
 * that): what it acknowledged is in the files restart k loaded, or the kill took it.
 */
function account(o: Observed): ScenarioResult {
  const { restarts, reloads, final } = o;
  const { acks, runs, completions, fenced } = o.seen;
  const K = restarts.length;
  /** The restart a reply received at `at` came before (K: after the last one). */
  const replyEpoch = (at: number): number => {
    const k = restarts.findIndex((r) => at < r.spawnedAt);
    return k < 0 ? K : k;
  };
  /** The kill that ended the server a claim made at `since` (K: none did). */
  const claimEpoch = (since: number): number => {
    const k = restarts.findIndex((r) => since < r.killedAt);
    return k < 0 ? K : k;
  };
  const finalByN = byPayload(final);
  const perKill = restarts.map((r) => ({
    cut_bytes: r.cut?.bytes ?? 0,
    cut_writes: r.cut?.writes ?? 0,
    cut_age_ms: r.cut?.ageMs ?? 0,
    enqueues_lost: 0,
    completions_undone: 0,
    fence_rolled_back: 0,
    consumer_back_ms: Math.max(0, (completions.find((c) => c.at >= r.readyAt)?.at ?? r.readyAt) - r.readyAt),
  }));

  // acknowledged enqueues: in the files of the next restart, or taken by its kill
  let enqueuesLost = 0;
  let idsReused = 0;
  let jobsLost = 0;
  for (const ack of acks) {
    const k = replyEpoch(ack.at);
    if (k < K && !reloads[k]!.byN.has(ack.n)) {
      enqueuesLost++;
      perKill[k]!.enqueues_lost++;
      // its generated id came back from the rolled-back sequence, naming another job
      const other = final.rows.get(ack.id);
      if (other && nOf(other) !== ack.n) idsReused++;
      continue;
    }
    if (!finalByN.has(ack.n)) jobsLost++;
  }
  // an enqueue sent before a kill and answered after the restart (ioredis sent it again): the
  // first run kept by the files answers with its id; lost with them, it runs again
  const replayed = { kept_by_the_files: 0, made_again: 0 };
  for (const ack of acks) {
    const k = restarts.findIndex((r) => ack.since < r.killedAt && ack.at >= r.spawnedAt);
    if (k >= 0) replayed[reloads[k]!.byN.has(ack.n) ? 'kept_by_the_files' : 'made_again']++;
  }
  // an acknowledged enqueue sent again with its key: the same id when the files kept its request
  // key (and so its job), one new job when they lost both
  const resent = { same_id: 0, made_again: 0, kept_but_other_id: 0 };
  for (const r of o.resends) {
    if (!reloads[r.restart]!.byN.has(r.n)) resent.made_again++;
    else if (r.id === r.firstId) resent.same_id++;
    else resent.kept_but_other_id++;
  }
  // one script writes the job and its request key: a reloaded file holds both or neither
  let keyWithoutJob = 0;
  let jobWithoutKey = 0;
  for (const reloaded of reloads) {
    for (const n of reloaded.requestKeys) if (!reloaded.byN.has(n)) keyWithoutJob++;
    for (const n of reloaded.byN.keys()) if (!reloaded.requestKeys.has(n)) jobWithoutKey++;
  }

  // acknowledged completions: kept by the next restart's files, or undone, and then what
  let undone = 0;
  let completionsUndone = 0;
  const claimsLost = new Set<string>();
  const rowWas = { active_under_its_claim: 0, active_under_an_earlier_claim: 0, pending: 0, gone: 0, other: 0 };
  const then = { reran_and_completed: 0, unfinished: 0, gone: 0, completed_without_a_run: 0 };
  const leaseLeft: number[] = [];
  const reapedRerun: number[] = [];
  const claimedRerun: number[] = [];
  for (const c of completions) {
    const k = replyEpoch(c.at);
    const finalRow = finalByN.get(c.n)?.[0]?.[1];
    const row = k < K ? reloads[k]!.byN.get(c.n)?.find(([id]) => id === c.id)?.[1] : undefined;
    if (k === K || (row?.s === 'completed' && tokenOf(row) === c.token)) {
      if (finalRow?.s !== 'completed') completionsUndone++;
      continue;
    }
    undone++;
    perKill[k]!.completions_undone++;
    const restart = restarts[k]!;
    // the row as the restart found it: its claim kept and the completion lost; or back to an
    // earlier lease (a reap and the claim after it lost too); or pending, the claim lost; or gone
    // with its enqueue
    const was =
      row === undefined
        ? 'gone'
        : row.s === 'active'
          ? tokenOf(row) === c.token
            ? 'active_under_its_claim'
            : 'active_under_an_earlier_claim'
          : row.s === 'pending'
            ? 'pending'
            : 'other';
    rowWas[was]++;
    if (was !== 'active_under_its_claim') claimsLost.add(`${c.id}|${c.token}`);
    // it completed at c.at, so its next run is a new claim, made after the restart
    const rerun = runs.find((r) => r.n === c.n && r.at > c.at);
    if (!finalRow) then.gone++;
    else if (finalRow.s !== 'completed') then.unfinished++;
    else if (!rerun) then.completed_without_a_run++;
    else then.reran_and_completed++;
    if (rerun && row?.s === 'active') {
      leaseLeft.push(reloads[k]!.snap.active.get(c.id)! - restart.readyAt);
      reapedRerun.push(rerun.at - restart.readyAt);
    }
    if (rerun && was === 'pending') claimedRerun.push(rerun.at - restart.readyAt);
  }

  // settles and renewals the fences refused, by what the files of the restart after the claim held
  const fencedBy = { claim_lost_to_fsync: 0, lease_lapsed_before_renewal: 0, without_a_restart: 0, after_its_completion_was_recorded: 0 };
  for (const f of fenced) {
    const k = claimEpoch(f.since);
    // the same claim (its lease end) also reported completed: a renewal in flight behind the
    // settle came back refused, and the consumer reported the job fenced after the fact
    if (completions.some((c) => c.id === f.id && c.token === f.token && c.since === f.since)) fencedBy.after_its_completion_was_recorded++;
    else if (k === K || f.at < restarts[k]!.spawnedAt) {
      // rare (10 in one of ten full runs): say enough to explain the next one
      if (fencedBy.without_a_restart++ < 3) {
        const r = restarts.filter((x) => x.spawnedAt <= f.at).length;
        const since = r === 0 ? 'the start' : `restart ${r}`;
        const from = r === 0 ? o.startedAt : restarts[r - 1]!.readyAt;
        console.log(`# redis-restart-everysec: fenced without a restart: ${f.id} token ${f.token}, claimed ${f.since - from} ms and fenced ${f.at - from} ms after ${since}`);
      }
    }
    else if (tokenOf(reloads[k]!.snap.rows.get(f.id)) === f.token) fencedBy.lease_lapsed_before_renewal++;
    else {
      fencedBy.claim_lost_to_fsync++;
      claimsLost.add(`${f.id}|${f.token}`);
    }
  }

  // one claim (job and lease token) run twice: explained when the files of the restart after the
  // first claim lost it, so the fence counter rolled back and handed the same token out again
  const byClaim = new Map<string, Seen[]>();
  for (const r of runs) {
    const key = `${r.id}|${r.token}|${r.n}`;
    byClaim.set(key, [...(byClaim.get(key) ?? []), r]);
  }
  let sameClaimTwice = 0;
  let staleSettles = 0;
  let rerunsUnexplained = 0;
  for (const [key, list] of byClaim) {
    if (list.length < 2) continue;
    const [first, second] = list as [Seen, Seen];
    const k = claimEpoch(first.since);
    if (k === K || second.since < restarts[k]!.spawnedAt || tokenOf(reloads[k]!.snap.rows.get(first.id)) === first.token) {
      rerunsUnexplained++;
      continue;
    }
    sameClaimTwice++;
    claimsLost.add(key.slice(0, key.lastIndexOf('|')));
    // both holders told "completed" after the restart: the old holder's settle counted for the new claim
    if (completions.filter((c) => c.id === first.id && c.token === first.token && c.at >= restarts[k]!.spawnedAt).length > 1) staleSettles++;
  }
  // the fence counter, rolled back by each kill: the highest token handed out before it, less the file's
  restarts.forEach((_, k) => {
    const highest = runs.reduce((max, r) => (claimEpoch(r.since) === k ? Math.max(max, r.token) : max), 0);
    perKill[k]!.fence_rolled_back = Math.max(0, highest - Number(reloads[k]!.snap.meta.fence ?? 0));
  });

  const states = [...final.rows.values()].map((row) => row.s);
  const finalViolations = findViolations(final);
  const reloadViolations = reloads.flatMap((r) => r.violations);
  for (const v of [...finalViolations, ...reloadViolations].slice(0, 10)) console.log(`# redis-restart-everysec: ${v}`);
  return {
    scenario: 'redis-restart-everysec',
    jobs: acks.length,
    faults: `redis-server SIGKILLed and restarted ${K} time(s), appendfsync everysec: ${o.plan.map((p) => `${p.loss} (${p.when})`).join(', ')}`,
    acknowledged: acks.length,
    producer_retries: o.producerRetries,
    consumer_errors: o.consumerErrors,
    acknowledged_enqueues_lost_to_fsync: enqueuesLost,
    generated_ids_reused: idsReused,
    enqueues_sent_again_by_ioredis: replayed,
    acknowledged_enqueues_resent_with_their_keys: resent,
    completions_acknowledged: completions.length,
    completions_undone_by_fsync: undone,
    undone_row_was: rowWas,
    undone_then: then,
    reaped_and_rerun_after_restart: range(reapedRerun),
    lease_left_at_restart: range(leaseLeft),
    claimed_again_after_restart: range(claimedRerun),
    claims_lost_to_fsync: claimsLost.size,
    fenced: fencedBy,
    same_claim_run_twice: sameClaimTwice,
    stale_settle_taken_for_new_claim: staleSettles,
    request_key_without_job: keyWithoutJob,
    job_without_request_key: jobWithoutKey,
    ...Object.fromEntries(perKill.map((kill, i) => [`kill_${i + 1}`, kill])),
    jobs_lost: jobsLost + keyWithoutJob,
    duplicate_jobs: [...finalByN.values()].reduce((sum, rows) => sum + rows.length - 1, 0),
    completions_undone: completionsUndone,
    reruns_unexplained: rerunsUnexplained,
    completed: states.filter((s) => s === 'completed').length,
    not_finished: states.filter((s) => s !== 'completed' && s !== 'dead').length,
    invariant_violations: finalViolations.length + reloadViolations.length,
    invariant_violations_on_reload: reloadViolations.length,
    duration_s: Math.round((performance.now() - o.started) / 100) / 10,
  };
}
