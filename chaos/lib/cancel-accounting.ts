import type { QueueEvent } from '../../src/events/events.js';
import type { Freezes } from './freezes.js';
import type { HookFired, RunEnd, RunRecord, RunStart } from './run-log.js';

/** What a cancel (one `queue.cancel` call, sent again until answered) was answered. */
export type CancelAnswer = 'cancelled' | 'cancelling' | 'finished' | 'missing' | 'unanswered';

/** One cancel as its sender saw it: first sent, answered (its last try), and how many tries it took. */
export interface CancelSent {
  readonly answer: CancelAnswer;
  /** `Date.now()` before its first try: the cancel cannot have reached Redis before this. */
  readonly sentAt: number;
  /** `Date.now()` once answered (or given up). */
  readonly answeredAt: number;
  readonly tries: number;
}

/** A job of the run, as the scenario planned it and what it sent it. */
export interface JobPlan {
  readonly id: string;
  /** The reason its own cancel gave (`chaos:<n>`), or the bulk cancel's for a bulk job. */
  readonly reason: string;
  /** Its cancel, when it is a target and the cancel was sent. */
  readonly cancel?: CancelSent;
  /** The same cancel sent once more after its answer (a repeat must answer as the first). */
  readonly repeat?: CancelSent;
  /** One of the jobs a bulk cancel (`cancelJobs`) was sent for: its answer's time, or undefined while unanswered. */
  readonly bulk?: { readonly answeredAt: number | undefined };
}

/** A job row as read after the run. */
export interface CancelRow {
  readonly state: string;
  /** Its cancel reason (`cx`), if any. */
  readonly reason: string | undefined;
}

/**
 * How long a run the cancel found may go on, untold, after the cancel reached Redis, in its
 * process's running time (a frozen holder cannot hear): a renewal (a third of the 1 s lease) and
 * a round trip, with room.
 */
export const HEAR_WITHIN_MS = 2_000;

/** What the cancel found, by the job's last event before its first `cancelling` or `cancelled`. */
function foundState(before: QueueEvent | undefined, first: QueueEvent): string {
  if (first.event === 'cancelling') return 'active';
  switch (before?.event) {
    case 'scheduled':
      return 'scheduled';
    case 'retried':
      return 'scheduled_retry';
    case 'step':
      return before.state === 'done' ? 'pending' : 'sleeping';
    case 'active':
      return 'active';
    default:
      return 'pending';
  }
}

const quantiles = (values: number[]): Record<string, number> => {
  if (values.length === 0) return {};
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[sorted.length >> 1]!, p99: sorted[Math.floor(sorted.length * 0.99)]!, max: sorted.at(-1)! };
};

/**
 * Every job of a cancel-faults run accounted for, from Redis (its rows and its whole events
 * stream) and the run log (each handler run's start and end, each onCancelled hook), against what
 * the scenario sent. The counts that must be 0:
 *
 * - `jobs_lost`, `not_finished`, `dead_unexpected`: an acknowledged job with no row, one not
 *   completed or cancelled, one dead (no job is meant to die: attempts are plenty).
 * - `cancels_not_kept`: a job whose cancel was answered `cancelled` or `cancelling` (its first
 *   answer, or its bulk cancel's) that did not end cancelled.
 * - `cancel_answers_wrong`: an answer `finished` (JobStateError) for a job that did not complete
 *   before it (not completed, or a cancel event for it in the stream), `missing` for a job that
 *   exists, or a repeat of an answered cancel answered otherwise (`cancelled` again, `cancelling`
 *   or `cancelled` after `cancelling`, `finished` again).
 * - `completed_after_cancel`: a job with a `cancelling` or `cancelled` event (the cancel found it
 *   unfinished) that has a `completed` event after it, or ended completed.
 * - `claims_after_cancel`: an `active` event (a claim) after the job's first cancel event.
 * - `runs_after_cancel`: a handler run that started (by its process's clock) after the cancel's
 *   answer came back, other than the run of the claim the cancel found running (its `cancelling`,
 *   the same attempt: one a consumer held and had not started, whose notice it had not heard yet,
 *   counted in `late_starts`) while the job was still active under it (a start after the job's
 *   `cancelled` event counts here); for a bulk job, any run after the bulk cancel's answer.
 * - `cancelled_uncancelled`: a job that ended cancelled with no cancel sent for it, or with a
 *   reason not its own cancel's (another job's cancel reached it).
 * - `cancelled_events_not_once`: a cancelled job without exactly one `cancelled` event, any other
 *   with one, or a job with more than one `cancelling`.
 * - `cancels_not_heard`: a run the cancel found (its `cancelling`) that went on more than
 *   HEAR_WITHIN_MS of its process's running time (`freezes` left out) after the cancel reached
 *   Redis without its signal aborting (with JobCancelledError, or LeaseLostError once the reaper
 *   ended it), and ended.
 * - `hooks_wrong`: onCancelled fired for a job that did not end cancelled.
 * - `reruns_unexplained`: two holders of one attempt, a (job, lease token) whose run started twice.
 */
export function accountForCancels(
  plans: readonly JobPlan[],
  acknowledged: ReadonlySet<string>,
  rows: ReadonlyMap<string, CancelRow>,
  events: readonly QueueEvent[],
  log: readonly RunRecord[],
  killedAt: ReadonlyMap<number, number>,
  freezes: Freezes,
): Record<string, number | Record<string, number>> {
  const starts = new Map<string, RunStart[]>();
  const ends = new Map<string, RunEnd>();
  const hooks: HookFired[] = [];
  for (const r of log) {
    if (r.k === 's') starts.set(r.id, [...(starts.get(r.id) ?? []), r]);
    else if (r.k === 'e') ends.set(`${r.id}|${r.token}|${r.pid}`, r);
    else hooks.push(r);
  }
  const endOf = (s: RunStart): RunEnd | undefined => ends.get(`${s.id}|${s.token}|${s.pid}`);

  /** Per job, its events in stream order. */
  const perJob = new Map<string, QueueEvent[]>();
  for (const e of events) if ('jobId' in e) perJob.set(e.jobId, [...(perJob.get(e.jobId) ?? []), e]);

  const counts = {
    jobs_lost: 0,
    not_finished: 0,
    dead_unexpected: 0,
    cancels_not_kept: 0,
    cancel_answers_wrong: 0,
    completed_after_cancel: 0,
    claims_after_cancel: 0,
    runs_after_cancel: 0,
    cancelled_uncancelled: 0,
    cancelled_events_not_once: 0,
    cancels_not_heard: 0,
    hooks_wrong: 0,
    reruns_unexplained: 0,
  };
  const answers: Record<string, number> = {};
  const repeats: Record<string, number> = {};
  const found: Record<string, number> = {};
  const cancelledBy: Record<string, number> = {};
  const ended = { completed: 0, cancelled: 0 };
  let lateStarts = 0;
  let lateStartsAborted = 0;
  let runs = 0;
  let ranMoreThanOnce = 0;
  let cutByKill = 0;
  let cutUnexplained = 0;
  let cancelTries = 0;
  const heardMs: number[] = [];
  const abortOutcomes: Record<string, number> = {};
  const abortedBy: Record<string, number> = {};
  /** Why each broken count was counted, for CANCEL_VERBOSE=1. */
  const why: string[] = [];

  for (const plan of plans) {
    const { id } = plan;
    if (!acknowledged.has(id)) continue;
    const row = rows.get(id);
    const jobEvents = perJob.get(id) ?? [];
    const jobStarts = starts.get(id) ?? [];
    runs += jobStarts.length;
    if (jobStarts.length > 1) ranMoreThanOnce++;
    const tokens = jobStarts.map((s) => s.token);
    const twice = tokens.filter((t, i) => tokens.indexOf(t) !== i).length;
    if (twice > 0) {
      counts.reruns_unexplained += twice;
      why.push(`${id} token run twice: ${jobStarts.map((s) => `${s.token}@${s.pid}`).join(', ')}`);
    }
    for (const s of jobStarts) {
      const end = endOf(s);
      if (end?.abortedBy) abortedBy[end.abortedBy] = (abortedBy[end.abortedBy] ?? 0) + 1;
      if (end) continue;
      const kill = killedAt.get(s.pid);
      if (kill !== undefined && kill >= s.at) cutByKill++;
      else {
        cutUnexplained++;
        why.push(`${id} run ${s.token} by ${s.pid} never ended, its process not killed`);
      }
    }
    if (!row) {
      counts.jobs_lost++;
      why.push(`lost ${id}`);
      continue;
    }
    if (row.state === 'completed') ended.completed++;
    else if (row.state === 'cancelled') ended.cancelled++;
    else if (row.state === 'dead') counts.dead_unexpected++;
    else counts.not_finished++;
    if (row.state !== 'completed' && row.state !== 'cancelled') why.push(`${id} ended ${row.state}`);

    // who cancelled it: a cancel sent for it, under its own reason
    const sent = plan.cancel !== undefined || plan.bulk !== undefined;
    if (row.state === 'cancelled' && (!sent || row.reason !== plan.reason)) {
      counts.cancelled_uncancelled++;
      why.push(`${id} cancelled (${row.reason}) but ${sent ? `its cancel said ${plan.reason}` : 'no cancel was sent for it'}`);
    }

    // its answer(s)
    const answer = plan.cancel?.answer;
    if (plan.cancel) {
      answers[plan.cancel.answer] = (answers[plan.cancel.answer] ?? 0) + 1;
      cancelTries += plan.cancel.tries;
    }
    const kept = answer === 'cancelled' || answer === 'cancelling' || (plan.bulk?.answeredAt !== undefined && answer === undefined);
    if (kept && row.state !== 'cancelled') {
      counts.cancels_not_kept++;
      why.push(`${id} cancel answered ${answer ?? 'by the bulk cancel'}, ended ${row.state}`);
    }
    const firstCancel = jobEvents.findIndex((e) => e.event === 'cancelling' || e.event === 'cancelled');
    if (answer === 'finished' && (row.state !== 'completed' || firstCancel >= 0)) {
      counts.cancel_answers_wrong++;
      why.push(`${id} cancel answered finished, ended ${row.state}, cancel event at ${firstCancel}`);
    }
    if (answer === 'missing') {
      counts.cancel_answers_wrong++;
      why.push(`${id} cancel answered missing`);
    }
    if (plan.repeat && plan.cancel) {
      cancelTries += plan.repeat.tries;
      const key = `${plan.cancel.answer}>${plan.repeat.answer}`;
      repeats[key] = (repeats[key] ?? 0) + 1;
      const again = plan.repeat.answer;
      const fine =
        again === 'unanswered' ||
        (plan.cancel.answer === 'cancelled' && again === 'cancelled') ||
        (plan.cancel.answer === 'cancelling' && (again === 'cancelling' || again === 'cancelled')) ||
        (plan.cancel.answer === 'finished' && again === 'finished');
      if (!fine) {
        counts.cancel_answers_wrong++;
        why.push(`${id} cancel answered ${plan.cancel.answer}, its repeat ${again}`);
      }
    }

    // the stream: after the first cancel event, no claim and no completion; its cancelled events
    const cancelledEvents = jobEvents.filter((e) => e.event === 'cancelled').length;
    const cancellingEvents = jobEvents.filter((e) => e.event === 'cancelling').length;
    if (cancelledEvents !== (row.state === 'cancelled' ? 1 : 0) || cancellingEvents > 1) {
      counts.cancelled_events_not_once++;
      why.push(`${id} ${row.state} with ${cancelledEvents} cancelled and ${cancellingEvents} cancelling events`);
    }
    let foundAttempt: number | undefined;
    let cancelReachedAt: number | undefined;
    /** When the job ended cancelled (its `cancelled` event's time), if it did. */
    let endedCancelledAt: number | undefined;
    if (firstCancel >= 0) {
      const first = jobEvents[firstCancel]!;
      cancelReachedAt = first.time;
      const before = jobEvents.slice(0, firstCancel);
      const state = foundState(before.at(-1), first);
      found[state] = (found[state] ?? 0) + 1;
      const after = jobEvents.slice(firstCancel + 1);
      if (after.some((e) => e.event === 'active')) {
        counts.claims_after_cancel++;
        why.push(`${id} claimed after its cancel: ${jobEvents.map((e) => e.event).join(',')}`);
      }
      if (after.some((e) => e.event === 'completed') || row.state === 'completed') {
        counts.completed_after_cancel++;
        why.push(`${id} completed after its cancel: ${jobEvents.map((e) => e.event).join(',')}`);
      }
      const last = jobEvents.map((e) => e.event).lastIndexOf('cancelled');
      if (last >= 0) {
        endedCancelledAt = jobEvents[last]!.time;
        // at once (not running), by its run's settle, or by the reaper (its lease lapsed first)
        const by = first.event === 'cancelled' ? 'cancel' : jobEvents[last - 1]?.event === 'stalled' ? 'reaper' : 'settle';
        cancelledBy[by] = (cancelledBy[by] ?? 0) + 1;
      }
      if (first.event === 'cancelling') {
        const claim = before.filter((e) => e.event === 'active').at(-1);
        foundAttempt = claim?.event === 'active' ? claim.attempt : undefined;
      }
    }

    // the runs: none started after the answer but the run of the claim the cancel found
    const answeredAt = kept ? (plan.cancel?.answeredAt ?? plan.bulk?.answeredAt) : undefined;
    if (answeredAt !== undefined) {
      for (const s of jobStarts) {
        if (s.at <= answeredAt) continue;
        // the found claim's run may start late only while the job is still active under it: not
        // once the job has ended cancelled (by the reaper: its own settle comes after its start)
        const ended = endedCancelledAt !== undefined && s.at > endedCancelledAt;
        if (foundAttempt !== undefined && s.attempt === foundAttempt && plan.bulk === undefined && !ended) {
          lateStarts++;
          if (s.aborted) lateStartsAborted++;
          why.push(`(reported) ${id} late start of its found claim (attempt ${s.attempt}, token ${s.token}, by ${s.pid}) ${s.at - answeredAt} ms after its cancel's answer, signal ${s.aborted ? '' : 'not '}aborted; its end ${JSON.stringify(endOf(s))}`);
        } else {
          counts.runs_after_cancel++;
          why.push(
            `${id} run (attempt ${s.attempt}, token ${s.token}, by ${s.pid}) started ${s.at - answeredAt} ms after its cancel's answer${ended ? `, ${s.at - endedCancelledAt!} ms after the job ended cancelled` : ''}, signal ${s.aborted ? '' : 'not '}aborted; found attempt ${foundAttempt}; its end ${JSON.stringify(endOf(s))}`,
          );
        }
      }
    }
    // the run the cancel found: told within HEAR_WITHIN_MS, or ended or killed before that
    if (foundAttempt !== undefined && cancelReachedAt !== undefined) {
      const run = jobStarts.filter((s) => s.attempt === foundAttempt).at(-1);
      const end = run && endOf(run);
      if (end?.abortedAt !== undefined && end.abortedBy === 'JobCancelledError') heardMs.push(Math.max(0, end.abortedAt - cancelReachedAt));
      if (end?.abortedBy === 'JobCancelledError') abortOutcomes[end.outcome] = (abortOutcomes[end.outcome] ?? 0) + 1;
      if (end && end.abortedBy === undefined && freezes.runningMs(end.pid, cancelReachedAt, end.at) > HEAR_WITHIN_MS) {
        counts.cancels_not_heard++;
        why.push(`${id} run ${run.token} by ${end.pid} went on untold until ${end.at - cancelReachedAt} ms after its cancel reached Redis (${freezes.runningMs(end.pid, cancelReachedAt, end.at)} ms running)`);
      }
    }
  }
  for (const hook of hooks) {
    if (rows.get(hook.id)?.state !== 'cancelled') {
      counts.hooks_wrong++;
      why.push(`${hook.id} onCancelled but ${rows.get(hook.id)?.state}`);
    }
  }
  if (process.env.CANCEL_VERBOSE) console.log(why.slice(0, 80).join('\n'));
  return {
    ended_completed: ended.completed,
    ended_cancelled: ended.cancelled,
    cancel_answers: answers,
    repeat_answers: repeats,
    cancel_tries: cancelTries,
    cancels_found: found,
    cancelled_by: cancelledBy,
    runs,
    ran_more_than_once: ranMoreThanOnce,
    runs_cut_by_kill: cutByKill,
    runs_cut_unexplained: cutUnexplained,
    runs_aborted_by: abortedBy,
    aborted_runs_ended: abortOutcomes,
    heard_after_ms: quantiles(heardMs),
    late_starts: lateStarts,
    late_starts_aborted: lateStartsAborted,
    on_cancelled_hooks: hooks.length,
    ...counts,
  };
}
