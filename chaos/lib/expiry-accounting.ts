import type { QueueEvent } from '../../src/events/events.js';
import type { ExpiryRunStart } from './expiry-jobs.js';
import type { PauseSpan } from './pauses.js';
import type { RunEnd, RunRecord } from './run-log.js';

/** The error an expired job dies with, up to its expiry's time. */
export const EXPIRED_PREFIX = 'EMQEXPIRED: not started by its expiry at ';

/**
 * How long before a pause's resume a job's expiry must come for its death to be due inside the
 * pause (`expired_after_resume`): several beats (a consumer beats every 500 ms, paused or not)
 * and a consumer's restart.
 */
export const PAUSE_SWEEP_MARGIN_MS = 2_000;

/** A job of the run as the scenario planned it. */
export interface ExpiryPlan {
  readonly id: string;
  /** Whether it was added with `expireAfterMs` or `expireAt`. */
  readonly expires: boolean;
  readonly failOnce: boolean;
  readonly group: string | undefined;
}

/** A job row as read after the run. */
export interface ExpiryRow {
  readonly state: string;
  /** Its last error (`e`). */
  readonly error: string | undefined;
  /** Its expiry (`xa`, server ms), if it has one. */
  readonly expireAt: number | undefined;
  /** When it finished (`f`, server ms). */
  readonly finishedAt: number | undefined;
}

const quantiles = (values: number[]): Record<string, number> => {
  if (values.length === 0) return {};
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[sorted.length >> 1]!, p99: sorted[Math.floor(sorted.length * 0.99)]!, max: sorted.at(-1)! };
};

/**
 * Every job of an expiry-faults run accounted for, from Redis (its rows and its whole events
 * stream) and the run log (each handler run's start, with its claim's server time, and end). A
 * job's claim is its `active` event; its time by the server's clock lies between its stream
 * entry's time (the entry is written at the claim script's end) and the previous entry's (written
 * before the script began), the claim's own `now` in between. A claim counts as the job's start
 * unless a `released` gives it back (its attempt not counted: it may still expire). The counts that
 * must be 0:
 *
 * - `jobs_lost`, `not_finished`: an acknowledged job with no row, one neither completed nor dead.
 * - `dead_unexpected`: a job dead of anything but its expiry (attempts are plenty).
 * - `expired_without_expiry`: a job added without an expiry dead with EMQEXPIRED.
 * - `expired_but_ran`: an expired job with a handler run logged, or a claim not given back.
 * - `expired_early`: an expired job whose row's expiry (`xa`) is after its finish (`f`), or absent,
 *   whose `dead` event came before it, or whose error names another time.
 * - `started_after_expiry`: a job whose start (its first claim not given back) came after its
 *   expiry by the server's clock: the previous stream entry at or after `xa`.
 * - `starts_undecided`: a start the stream cannot place (its claim's entry at or after `xa`, the
 *   previous before) that the run log does not place before `xa` either (its run's claim time,
 *   never earlier than the claim, is; a run killed before it logged, or a claim answered again
 *   from its request key, leaves it undecided: rare enough to look at each).
 * - `retries_not_run`: a job whose first attempt failed (by design) not completed by a later run.
 * - `dead_events_not_once`: an expired job without exactly one `dead` event (with its error), a
 *   completed one with any.
 * - `reruns_unexplained`: two holders of one attempt, a (job, lease token) whose run started twice.
 * - `expired_after_resume`: an expired job whose expiry came PAUSE_SWEEP_MARGIN_MS or more before
 *   the resume of a pause it waited in (the queue's, or its group's), yet whose `dead` event comes
 *   after that resume's in the stream: the beats of a paused queue sweep its expiries.
 */
export function accountForExpiries(
  plans: readonly ExpiryPlan[],
  acknowledged: ReadonlySet<string>,
  rows: ReadonlyMap<string, ExpiryRow>,
  events: readonly QueueEvent[],
  log: readonly RunRecord[],
  spans: readonly PauseSpan[],
): { counts: Record<string, number | Record<string, number>>; why: string[] } {
  const starts = new Map<string, ExpiryRunStart[]>();
  const ends = new Map<string, RunEnd>();
  for (const r of log) {
    if (r.k === 's') starts.set(r.id, [...(starts.get(r.id) ?? []), r as ExpiryRunStart]);
    else if (r.k === 'e') ends.set(`${r.id}|${r.token}|${r.pid}`, r);
  }

  /** Per job, its events in stream order; per stream entry, the time of the entry before it. */
  const perJob = new Map<string, QueueEvent[]>();
  const before = new Map<string, number>();
  /** Each event's position in the stream as read. */
  const position = new Map<QueueEvent, number>();
  let lastEntry: { id: string; time: number } | undefined;
  for (const [at, e] of events.entries()) {
    position.set(e, at);
    if (e.id !== lastEntry?.id) {
      before.set(e.id, lastEntry?.time ?? -Infinity);
      lastEntry = { id: e.id, time: e.time };
    }
    if ('jobId' in e) perJob.set(e.jobId, [...(perJob.get(e.jobId) ?? []), e]);
  }

  const counts = {
    jobs_lost: 0,
    not_finished: 0,
    dead_unexpected: 0,
    expired_without_expiry: 0,
    expired_but_ran: 0,
    expired_early: 0,
    started_after_expiry: 0,
    retries_not_run: 0,
    dead_events_not_once: 0,
    reruns_unexplained: 0,
    expired_after_resume: 0,
    starts_undecided: 0,
  };
  const why: string[] = [];
  const ended = { completed: 0, expired: 0 };
  const expiredWhile = { pending: 0, scheduled: 0, other: 0 };
  let withExpiry = 0;
  let startedInTime = 0;
  let startsDecidedByLog = 0;
  let failedFirst = 0;
  let retriedAfterExpiry = 0;
  let reranAfterExpiry = 0;
  let firstRunsAfterExpiryByWall = 0;
  let claimRepliesAfterExpiry = 0;
  let expiredInPause = 0;
  let expiredInGroupPause = 0;
  let dueInPause = 0;
  let expiredGrouped = 0;
  let runs = 0;
  let ranMoreThanOnce = 0;
  let runsCut = 0;
  const lag: number[] = [];
  const pauseLag: number[] = [];
  const startMargin: number[] = [];

  for (const plan of plans) {
    const { id } = plan;
    if (!acknowledged.has(id)) continue;
    const row = rows.get(id);
    if (!row) {
      counts.jobs_lost++;
      why.push(`lost ${id}`);
      continue;
    }
    if (plan.expires) withExpiry++;
    const mine = perJob.get(id) ?? [];
    const runStarts = starts.get(id) ?? [];
    runs += runStarts.length;
    if (runStarts.length > 1) ranMoreThanOnce++;
    // a run with no end logged: its process was SIGKILLed under it (the only way one stops)
    runsCut += runStarts.filter((s) => !ends.has(`${id}|${s.token}|${s.pid}`)).length;
    const tokens = new Set<string>();
    for (const s of runStarts) {
      const key = `${s.token}|${s.attempt}`;
      if (tokens.has(key)) {
        counts.reruns_unexplained++;
        why.push(`${id}: token ${s.token} started twice`);
      }
      tokens.add(key);
    }
    const expired = row.state === 'dead' && (row.error ?? '').startsWith(EXPIRED_PREFIX);
    const xa = row.expireAt;

    if (row.state === 'completed') ended.completed++;
    else if (expired) ended.expired++;
    else if (row.state === 'dead') {
      counts.dead_unexpected++;
      why.push(`${id} dead: ${row.error}`);
    } else {
      counts.not_finished++;
      why.push(`${id} ${row.state}`);
    }
    if (expired && !plan.expires) {
      counts.expired_without_expiry++;
      why.push(`${id} expired without an expiry: ${row.error}`);
    }
    if (plan.expires && xa === undefined) {
      counts.expired_early++;
      why.push(`${id} added with an expiry, its row has none`);
    }

    // its claims: the start (a claim not given back) judged against its expiry
    let held = 0;
    let late = false;
    let started: QueueEvent | undefined;
    const deads = mine.filter((e) => e.event === 'dead');
    for (const e of mine) {
      if (e.event === 'active') {
        if (held === 0 && xa !== undefined) {
          const lower = before.get(e.id) ?? -Infinity;
          if (lower >= xa) {
            late = true;
            counts.started_after_expiry++;
            why.push(`${id} started after its expiry ${xa}: claimed in the entry ${e.id}, the previous at ${lower}`);
          } else if (e.time >= xa) {
            // the claim's now is in [lower, e.time]: the run log's claim time (never earlier) may settle it
            const run = runStarts.find((s) => s.attempt === e.attempt);
            if (run !== undefined && run.claimedAt < xa) startsDecidedByLog++;
            else {
              late = true;
              counts.starts_undecided++;
              why.push(`${id} start undecided: expiry ${xa}, claimed between ${lower} and ${e.time}, the run's claim time ${run?.claimedAt}`);
            }
          }
          if (started === undefined) startMargin.push(xa - e.time);
        }
        held++;
        started ??= e;
      } else if (e.event === 'released' && held > 0) held--;
    }
    const everStarted = started !== undefined;
    if (xa !== undefined && everStarted && !expired && !late) startedInTime++;

    if (expired) {
      if (runStarts.length > 0 || held > 0) {
        counts.expired_but_ran++;
        why.push(`${id} expired, yet ${runStarts.length} run(s) logged, ${held} claim(s) not given back`);
      }
      const named = Number((row.error ?? '').slice(EXPIRED_PREFIX.length).split(' ')[0]);
      const dead = deads[0];
      if (plan.expires && (xa === undefined || row.finishedAt === undefined || xa > row.finishedAt || named !== xa || (dead !== undefined && dead.time < xa))) {
        counts.expired_early++;
        why.push(`${id} expired early: xa ${xa}, f ${row.finishedAt}, error ${row.error}, dead event at ${dead?.time}`);
      }
      if (deads.length !== 1 || (dead?.event === 'dead' && dead.error !== row.error)) {
        counts.dead_events_not_once++;
        why.push(`${id} expired with ${deads.length} dead events`);
      }
      // where it waited: its last event before its death
      const last = mine[mine.indexOf(dead ?? mine.at(-1)!) - 1];
      if (last?.event === 'scheduled') expiredWhile.scheduled++;
      else if (last?.event === 'added' || last?.event === 'promoted' || last?.event === 'released' || last?.event === 'replaced') expiredWhile.pending++;
      else expiredWhile.other++;
      if (xa !== undefined && row.finishedAt !== undefined) {
        const f = row.finishedAt;
        lag.push(f - xa);
        if (plan.group !== undefined) expiredGrouped++;
        // its death against the pauses, by the stream's order: between a pause's events, or after its resume
        const died = dead === undefined ? Infinity : position.get(dead)!;
        const within = (s: PauseSpan): boolean => s.fromAt < died && died < s.toAt;
        if (spans.some((s) => s.group === undefined && within(s))) expiredInPause++;
        else if (spans.some((s) => s.group !== undefined && s.group === plan.group && within(s))) expiredInGroupPause++;
        // due inside a pause (of the queue, or its group): swept by the beats meanwhile, not at the
        // resume; due well inside it (PAUSE_SWEEP_MARGIN_MS before the resume), never after it
        const pauses = spans.filter((s) => (s.group === undefined || s.group === plan.group) && s.from <= xa && xa <= s.to);
        if (pauses.length > 0) pauseLag.push(f - xa);
        const missed = pauses.find((s) => xa <= s.to - PAUSE_SWEEP_MARGIN_MS);
        if (missed) dueInPause++;
        if (missed && died > missed.toAt) {
          counts.expired_after_resume++;
          why.push(`${id} expiry ${xa} in the pause ${missed.group ?? 'queue'} ${missed.from}-${missed.to}, swept at ${f}, after its resume`);
        }
      }
    } else if (row.state === 'completed' && deads.length > 0) {
      counts.dead_events_not_once++;
      why.push(`${id} completed with ${deads.length} dead events`);
    }

    // a first attempt failed by design: a later run completed it
    const failedFirstHere = plan.failOnce && runStarts.some((s) => s.attempt === 1 && ends.get(`${id}|${s.token}|${s.pid}`)?.outcome === 'threw Error');
    if (failedFirstHere) {
      failedFirst++;
      if (row.state !== 'completed' || !runStarts.some((s) => s.attempt >= 2)) {
        counts.retries_not_run++;
        why.push(`${id} failed its first attempt, then ${row.state} with runs ${runStarts.map((s) => s.attempt).join(',')}`);
      }
    }

    // a started job's runs after its expiry: the retry of its failed first attempt, or a run again after a kill
    if (xa !== undefined && everStarted && !expired) {
      const firstRun = [...runStarts].sort((a, b) => a.at - b.at)[0];
      if (firstRun && firstRun.at >= xa) firstRunsAfterExpiryByWall++;
      const firstByAttempt = runStarts.filter((s) => s.attempt === 1).sort((a, b) => a.at - b.at)[0];
      if (firstByAttempt && firstByAttempt.claimedAt >= xa) claimRepliesAfterExpiry++;
      const later = mine.filter((e) => e.event === 'active' && e !== started && e.time > xa);
      if (failedFirstHere && later.some((e) => e.event === 'active' && e.attempt >= 2)) retriedAfterExpiry++;
      else if (later.length > 0) reranAfterExpiry++;
    }
  }

  return {
    counts: {
      with_expiry: withExpiry,
      ended,
      expired_while: expiredWhile,
      started_in_time: startedInTime,
      // a claim's start against its job's expiry, by the stream's order: how long before it (ms)
      start_before_expiry_ms: quantiles(startMargin),
      starts_decided_by_run_log: startsDecidedByLog,
      failed_first_attempt: failedFirst,
      retried_after_expiry: retriedAfterExpiry,
      reran_after_expiry: reranAfterExpiry,
      first_runs_after_expiry_by_wall_clock: firstRunsAfterExpiryByWall,
      claim_replies_after_expiry: claimRepliesAfterExpiry,
      expired_in_queue_pause: expiredInPause,
      expired_in_group_pause: expiredInGroupPause,
      expired_grouped: expiredGrouped,
      // expired jobs due at least PAUSE_SWEEP_MARGIN_MS before their pause's resume (those `expired_after_resume` judges)
      expiries_due_in_pause: dueInPause,
      // from its expiry to its death (ms): every expired job's, and those due while paused
      expiry_lag_ms: quantiles(lag),
      pause_expiry_lag_ms: quantiles(pauseLag),
      runs,
      ran_more_than_once: ranMoreThanOnce,
      runs_cut_by_kills: runsCut,
      ...counts,
    },
    why,
  };
}
