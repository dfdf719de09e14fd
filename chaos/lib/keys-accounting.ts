import type { QueueEvent } from '../../src/events/events.js';
import { FAILS_FOR_GOOD, type KeysRunStart } from './keys-jobs.js';
import type { RunEnd, RunRecord } from './run-log.js';

/** A job of the run as the scenario planned it: its id (as its add answered), its keys, and whether it fails for good by design. */
export interface KeysPlan {
  readonly id: string;
  readonly keys: readonly string[];
  readonly failForGood: boolean;
}

/** A job row as read after the run. */
export interface KeysRow {
  readonly state: string;
  readonly error: string | undefined;
}

/**
 * How much later than its claim's own clock (the server's TIME the claim script read, which its
 * starts are logged at) an `active` event's stream id is taken to be, at most, ms: the id is the
 * server's clock at the script's XADD, at its end. The rate judge counts a start in a claim's
 * window only when it is surely in it by that much. The run log measures the real lag
 * (`active_lag_ms_max`): under load it is sometimes more (a complete that settles first, then
 * claims; a script descheduled), so a count the events alone put over is looked at again with the
 * claims' own times the run log has.
 */
export const ACTIVE_EVENT_SLACK_MS = 2;

/** The events that end a run (its slot given back): its settles', and the reaper's `stalled`. */
const RUN_ENDS = new Set(['completed', 'retried', 'dead', 'stalled', 'released', 'cancelled']);

/** One claim as the events stream tells it: where and when, the limits in force then, and the event that ended its run. */
interface Claim {
  readonly index: number;
  readonly time: number;
  readonly limits: ReadonlyMap<string, number | null>;
  endTime?: number;
  endEvent?: string;
}

/** A handler run of the log, placed: its claim and the span its lease was live and its handler ran. */
interface Run {
  readonly start: KeysRunStart;
  readonly end: RunEnd | undefined;
  readonly claim: Claim | undefined;
  /** Its start to the first of its end, its process's kill, and its run's end in the stream (a settle, or the reaper). */
  readonly liveEnd: number;
  /** Its start to its end, or its process's kill: the time its handler ran, lease or not. */
  readonly handlerEnd: number;
}

/**
 * Every job of a keys-faults run accounted for, from Redis (rows and the whole events stream) and
 * the run log (each handler run's start and end), against the plan. The counts that must be 0:
 *
 * - `jobs_lost`, `not_finished`, `dead_unexpected`: an acknowledged job with no row; one neither
 *   completed nor dead, or one meant to fail for good not dead of it; one dead that was not meant
 *   to fail for good (attempts are plenty for the kills).
 * - `key_claims_over_limit`: the stream replayed (each `key-limit` sets a key's limit, each
 *   `active` counts a claim against each key its job names, each event that ends a run gives them
 *   back): a claim whose key already ran as many jobs as its limit in force.
 * - `key_events_unbalanced`: that replay not back to zero for every key at the end, an `active`
 *   for a job the replay holds running (two claims of one job at once), a run end for a job it
 *   does not: the stream does not tell every slot taken and given back.
 * - `key_runs_over_limit`: the run log swept per key, each run live from its start to the first of
 *   its end, its process's SIGKILL (a killed run is cut there: its slot stays taken until the
 *   reaper, but no handler runs), and its run's end in the stream (its settle, or the reaper's
 *   `stalled`: a run whose lease lapsed while it still ran is not a holder from then on, which
 *   Redis restarts make; such runs are counted in `runs_past_their_lease`): at any instant more
 *   live runs of a key than the limit in force at the latest of their claims (by the replay). Every
 *   run live then was claimed no later and still held its slot at that claim, which found its key
 *   below that limit: a limit lowered with runs above it lets them drain under the older claims'
 *   limit, never start more.
 * - `reruns_unexplained`: two holders of one job: a lease token or an attempt whose run started
 *   twice, or two runs of a job live at once (as above: a run past its lapsed lease is not live).
 * - `key_starts_over_rate`: the stream replayed for the keys' rates (each `key-rate` sets a key's
 *   rate or lifts it; a rate set from none starts an empty log, a limit changed keeps it, a lift
 *   deletes it, as lua/key-rate.lua does; each `active` is a start of every rated key its job
 *   names, at its entry's time): a claim whose key already had `limit` starts in the window of its
 *   period ending at that claim. A claim's script logs its starts at its TIME and writes its
 *   `active` at its end, so an event's time is its start's or up to ACTIVE_EVENT_SLACK_MS later
 *   (2 ms allowed): an earlier start is counted only when it is surely in the window, its event
 *   less than period - 2 ms before the claim's (a start at s counts until s + period, its log
 *   trimmed to the starts after now - period). Each key's period is fixed through the run (the
 *   scenario changes only limits): a period made longer would count, in its first window, only the
 *   starts the shorter one had kept. A claim the events put over is counted only when those
 *   starts are still in its window (ending at its event) by their claims' own server times, where
 *   the run log has them (a run's `claimedAt`, its claim's TIME, which its start is logged at or
 *   after; one answered again from its request key carries a later time than its event's, and
 *   then the event's less 2 ms is taken); else it is one the 2 ms did not cover
 *   (`rate_edges_placed_by_log`, reported).
 */
export function accountForKeys(
  plans: readonly KeysPlan[],
  acknowledged: ReadonlySet<string>,
  rows: ReadonlyMap<string, KeysRow>,
  events: readonly QueueEvent[],
  log: readonly RunRecord[],
  killedAt: ReadonlyMap<number, number>,
): { counts: Record<string, number | Record<string, number>>; why: string[] } {
  const why: string[] = [];
  const keysOf = new Map(plans.map((p) => [p.id, p.keys]));

  // the stream replayed: limits, claims and run ends
  const limits = new Map<string, number | null>();
  const counted = new Map<string, number>();
  const running = new Map<string, Claim>();
  const claims = new Map<string, Claim>();
  let claimsOverLimit = 0;
  let unbalanced = 0;
  let activeEvents = 0;
  let stalledEvents = 0;
  let limitEvents = 0;
  const parkedEvents: Record<string, number> = {};
  // the keys' rates: each one's limit and period in force, and the times of the starts its log holds
  const rates = new Map<string, { limit: number; periodMs: number }>();
  // each start: its event's time, and the earliest its claim's own time can be (the run log's
  // claimedAt when it is before the event, else the event's time less the slack)
  const startLogs = new Map<string, Array<{ time: number; from: number }>>();
  // each claim's own server time, from the run log (a run's claimedAt), by job and attempt
  const claimedAtOf = new Map<string, number>();
  for (const r of log) if (r.k === 's') claimedAtOf.set(`${r.id}|${r.attempt}`, (r as KeysRunStart).claimedAt);
  let rateEdgesPlacedByLog = 0;
  let rateEvents = 0;
  let startsOverRate = 0;
  let rateStartsJudged = 0;
  // claims whose window held its limit less one before them: they filled it (the rate bound reached)
  let rateWindowsFilled = 0;
  const parksByRate: Record<string, number> = {};
  const fullestWindow: Record<string, number> = {};
  events.forEach((e, index) => {
    if (e.event === 'key-limit') {
      limitEvents++;
      limits.set(e.key, e.limit);
      return;
    }
    if (e.event === 'key-rate') {
      rateEvents++;
      if (e.rate === null) {
        rates.delete(e.key);
        startLogs.delete(e.key);
      } else {
        if (!rates.has(e.key)) startLogs.set(e.key, []);
        rates.set(e.key, e.rate);
      }
      return;
    }
    if (e.event === 'parked') {
      parkedEvents[e.key] = (parkedEvents[e.key] ?? 0) + 1;
      // parked on a key below its limit in the replay: its rate held the job back
      const limit = limits.get(e.key) ?? null;
      if (rates.has(e.key) && (limit === null || (counted.get(e.key) ?? 0) < limit)) parksByRate[e.key] = (parksByRate[e.key] ?? 0) + 1;
      return;
    }
    if (!('jobId' in e)) return;
    const keys = keysOf.get(e.jobId) ?? [];
    if (e.event === 'active') {
      activeEvents++;
      if (running.has(e.jobId)) {
        unbalanced++;
        why.push(`${e.jobId} claimed (attempt ${e.attempt}) while the replay holds it running`);
      }
      for (const k of keys) {
        const limit = limits.get(k) ?? null;
        const n = counted.get(k) ?? 0;
        if (limit !== null && n >= limit) {
          claimsOverLimit++;
          why.push(`${e.jobId} claimed (attempt ${e.attempt}, event ${e.id}) with key ${k} at ${n} running, limit ${limit}`);
        }
        counted.set(k, n + 1);
        const rate = rates.get(k);
        if (rate) {
          // the log kept to the starts that may still count: nothing older than the window
          const logged = startLogs.get(k)!;
          while (logged.length > 0 && e.time - logged[0]!.time >= rate.periodMs - ACTIVE_EVENT_SLACK_MS) logged.shift();
          rateStartsJudged++;
          fullestWindow[k] = Math.max(fullestWindow[k] ?? Number.NEGATIVE_INFINITY, logged.length + 1 - rate.limit);
          if (logged.length >= rate.limit) {
            // the starts surely in its window by their claims' own times: the window its check
            // read ends no later than its event (a complete that frees a slot first reads the
            // clock there, after the claim's own `now`, and its claim checks and logs at that)
            const inWindow = logged.filter((st) => e.time - st.from < rate.periodMs).length;
            const detail = `${e.jobId} claimed (attempt ${e.attempt}, event ${e.id}) with key ${k} at ${logged.length} starts in its ${rate.periodMs} ms window by the events (${inWindow} by the claims' times; from ${logged.map((st) => `${st.time}/${st.from}`).join(' ')}), rate ${rate.limit}`;
            if (inWindow >= rate.limit) {
              startsOverRate++;
              why.push(detail);
            } else {
              rateEdgesPlacedByLog++;
              why.push(`(reported) ${detail}`);
            }
          } else if (logged.length === rate.limit - 1) rateWindowsFilled++;
          const claimedAt = claimedAtOf.get(`${e.jobId}|${e.attempt}`);
          logged.push({ time: e.time, from: claimedAt !== undefined && claimedAt < e.time ? claimedAt : e.time - ACTIVE_EVENT_SLACK_MS });
        }
      }
      const claim: Claim = { index, time: e.time, limits: new Map(keys.map((k) => [k, limits.get(k) ?? null])) };
      running.set(e.jobId, claim);
      claims.set(`${e.jobId}|${e.attempt}`, claim);
      return;
    }
    if (e.event === 'stalled') stalledEvents++;
    if (!RUN_ENDS.has(e.event)) return;
    const claim = running.get(e.jobId);
    if (!claim) {
      // a `dead` right after the reaper's `stalled` ends no run of its own
      if (e.event !== 'dead' || events[index - 1]?.event !== 'stalled') {
        unbalanced++;
        why.push(`${e.jobId} ${e.event} (event ${e.id}) with no run the replay holds`);
      }
      return;
    }
    claim.endTime = e.time;
    claim.endEvent = e.event;
    running.delete(e.jobId);
    for (const k of keys) counted.set(k, (counted.get(k) ?? 0) - 1);
  });
  for (const [k, n] of counted) {
    if (n !== 0) {
      unbalanced++;
      why.push(`key ${k}: the replay ends at ${n} running`);
    }
  }
  for (const id of running.keys()) why.push(`${id}: the replay ends with it running`);
  unbalanced += running.size;

  // the run log, each run placed
  const starts: KeysRunStart[] = [];
  const ends = new Map<string, RunEnd>();
  for (const r of log) {
    if (r.k === 's') starts.push(r as KeysRunStart);
    else if (r.k === 'e') ends.set(`${r.id}|${r.token}|${r.pid}`, r);
  }
  let cutByKill = 0;
  let cutUnexplained = 0;
  let pastLease = 0;
  let endsAfterSettle = 0;
  let unplaced = 0;
  // each placed run's `active` event time less its claim's own (the run's claimedAt): the lag the
  // rate judge's slack stands for (a claim answered again from its request key carries a later
  // claimedAt, so less)
  let lagMax = Number.NEGATIVE_INFINITY;
  let lagsOverSlack = 0;
  const runsOf = new Map<string, Run[]>();
  for (const s of starts) {
    const end = ends.get(`${s.id}|${s.token}|${s.pid}`);
    const claim = claims.get(`${s.id}|${s.attempt}`);
    const kill = killedAt.get(s.pid);
    const killed = end === undefined && kill !== undefined && kill >= s.at ? kill : Number.POSITIVE_INFINITY;
    const handlerEnd = Math.min(end?.at ?? Number.POSITIVE_INFINITY, killed);
    const liveEnd = Math.min(handlerEnd, claim?.endTime ?? Number.POSITIVE_INFINITY);
    if (claim) {
      const lag = claim.time - s.claimedAt;
      lagMax = Math.max(lagMax, lag);
      if (lag > ACTIVE_EVENT_SLACK_MS) {
        lagsOverSlack++;
        why.push(`(reported) ${s.id} claim (attempt ${s.attempt}, event ${events[claim.index]?.id}) ${lag} ms before its active event: ${events.slice(Math.max(0, claim.index - 3), claim.index + 2).map((e) => `${e.id} ${e.event}`).join(', ')}`);
      }
    } else {
      unplaced++;
      why.push(`${s.id} run (attempt ${s.attempt}, token ${s.token}) has no claim in the stream`);
    }
    if (!end) {
      if (killed !== Number.POSITIVE_INFINITY) cutByKill++;
      else {
        cutUnexplained++;
        why.push(`${s.id} run (attempt ${s.attempt}, token ${s.token}) by ${s.pid} never ended, its process not killed`);
      }
    }
    if (claim?.endTime !== undefined && handlerEnd > claim.endTime) {
      if (claim.endEvent === 'stalled') pastLease++;
      else if (end) {
        endsAfterSettle++;
        why.push(`(reported) ${s.id} run (attempt ${s.attempt}) ended at ${end.at}, after its ${claim.endEvent} at ${claim.endTime}`);
      }
    }
    const run: Run = { start: s, end, claim, liveEnd, handlerEnd };
    runsOf.set(s.id, [...(runsOf.get(s.id) ?? []), run]);
  }

  // two holders of one job
  let reruns = 0;
  let ranMoreThanOnce = 0;
  for (const [id, runs] of runsOf) {
    if (runs.length > 1) ranMoreThanOnce++;
    const tokens = runs.map((r) => r.start.token);
    const attempts = runs.map((r) => r.start.attempt);
    const twice = tokens.filter((t, i) => tokens.indexOf(t) !== i).length + attempts.filter((a, i) => attempts.indexOf(a) !== i).length;
    if (twice > 0) {
      reruns += twice;
      why.push(`${id} a token or attempt run twice: ${runs.map((r) => `${r.start.attempt}/${r.start.token}@${r.start.pid}`).join(', ')}`);
    }
    const sorted = [...runs].sort((a, b) => a.start.at - b.start.at);
    for (let i = 1; i < sorted.length; i++) {
      const before = sorted[i - 1]!;
      const run = sorted[i]!;
      if (run.start.at < before.liveEnd) {
        reruns++;
        why.push(`${id} run (attempt ${run.start.attempt}) started at ${run.start.at} while its attempt ${before.start.attempt}'s was live until ${before.liveEnd}`);
      }
    }
  }

  // the runs of each key swept: at every instant, no more live than the latest claim's limit
  const byKey = new Map<string, Run[]>();
  for (const runs of runsOf.values()) {
    for (const run of runs) for (const k of keysOf.get(run.start.id) ?? []) byKey.set(k, [...(byKey.get(k) ?? []), run]);
  }
  let runsOverLimit = 0;
  let overIfUncut = 0;
  const maxLive: Record<string, number> = {};
  const sweep = (k: string, runs: readonly Run[], endOf: (r: Run) => number, breach: (detail: string) => void): number => {
    const points: Array<{ at: number; run: Run; starts: boolean }> = [];
    for (const run of runs) {
      const to = endOf(run);
      if (to <= run.start.at) continue; // cut before it began: its lease ended first
      points.push({ at: run.start.at, run, starts: true });
      if (to !== Number.POSITIVE_INFINITY) points.push({ at: to, run, starts: false });
    }
    // ends before starts at one instant: a run's end is logged before its settle, which comes before the next claim
    points.sort((a, b) => a.at - b.at || Number(a.starts) - Number(b.starts));
    const live = new Set<Run>();
    let most = 0;
    for (const p of points) {
      if (p.starts) live.add(p.run);
      else live.delete(p.run);
      most = Math.max(most, live.size);
      let latest: Claim | undefined;
      for (const r of live) if (r.claim && (!latest || r.claim.index > latest.index)) latest = r.claim;
      const limit = latest?.limits.get(k);
      if (limit !== null && limit !== undefined && live.size > limit) {
        breach(`key ${k}: ${live.size} runs live at ${p.at} (${[...live].map((r) => `${r.start.id}/${r.start.attempt}`).join(' ')}), limit ${limit} at the latest of their claims`);
      }
    }
    return most;
  };
  for (const [k, runs] of byKey) {
    maxLive[k] = sweep(k, runs, (r) => r.liveEnd, (detail) => {
      runsOverLimit++;
      why.push(detail);
    });
    // the same, a run counted until its handler ended even past its lapsed lease: what the cut explains
    sweep(k, runs, (r) => r.handlerEnd, () => void overIfUncut++);
  }

  // every job's end
  let lost = 0;
  let notFinished = 0;
  let deadUnexpected = 0;
  const ended = { completed: 0, dead_by_design: 0 };
  for (const plan of plans) {
    if (!acknowledged.has(plan.id)) continue;
    const row = rows.get(plan.id);
    if (!row) {
      lost++;
      why.push(`lost ${plan.id}`);
      continue;
    }
    if (plan.failForGood) {
      if (row.state === 'dead' && (row.error ?? '').includes(FAILS_FOR_GOOD)) ended.dead_by_design++;
      else if (row.state === 'dead') {
        deadUnexpected++;
        why.push(`${plan.id} dead of ${row.error}, not of its failure`);
      } else {
        notFinished++;
        why.push(`${plan.id} meant to fail for good, ended ${row.state}`);
      }
    } else if (row.state === 'completed') ended.completed++;
    else if (row.state === 'dead') {
      deadUnexpected++;
      why.push(`${plan.id} dead: ${row.error}`);
    } else {
      notFinished++;
      why.push(`${plan.id} ended ${row.state}`);
    }
  }

  return {
    counts: {
      ended_completed: ended.completed,
      ended_dead_by_design: ended.dead_by_design,
      claims: activeEvents,
      reaped: stalledEvents,
      limit_events: limitEvents,
      parked_events: parkedEvents,
      runs: starts.length,
      ran_more_than_once: ranMoreThanOnce,
      runs_cut_by_kill: cutByKill,
      runs_cut_unexplained: cutUnexplained,
      runs_past_their_lease: pastLease,
      runs_ended_after_their_settle: endsAfterSettle,
      runs_unplaced: unplaced,
      most_runs_live: maxLive,
      instants_over_if_uncut: overIfUncut,
      jobs_lost: lost,
      not_finished: notFinished,
      dead_unexpected: deadUnexpected,
      key_claims_over_limit: claimsOverLimit,
      key_events_unbalanced: unbalanced,
      key_runs_over_limit: runsOverLimit,
      reruns_unexplained: reruns,
      rate_events: rateEvents,
      rate_starts_judged: rateStartsJudged,
      rate_windows_filled: rateWindowsFilled,
      // per key, the most starts a window held (with the claim's own) less the rate then: 0, a window at its limit
      rate_window_fullest_vs_limit: fullestWindow,
      parks_by_rate: parksByRate,
      active_lag_ms_max: Number.isFinite(lagMax) ? lagMax : 0,
      active_lags_over_slack: lagsOverSlack,
      rate_edges_placed_by_log: rateEdgesPlacedByLog,
      key_starts_over_rate: startsOverRate,
    },
    why,
  };
}
