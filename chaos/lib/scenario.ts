/** What every chaos scenario gets. */
export interface ScenarioContext {
  /** The run's private Redis. */
  readonly redisUrl: string;
  /** Small sizes and fewer faults, bounded to fit in CI (`--quick`). */
  readonly quick: boolean;
  /** The seed of the injected faults, so a run can be repeated. */
  readonly seed: number;
}

/** One scenario's counts: what was injected, and every job accounted for. */
export type ScenarioResult = Record<string, string | number | Record<string, number>>;

/** One fault scenario of `npm run chaos`. */
export interface Scenario {
  readonly name: string;
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}

/**
 * The promises of every scenario: a result breaks one when a count that must be 0 is not.
 * Jobs lost or duplicated, re-runs no lapsed lease explains, invariant violations, unfinished jobs,
 * acknowledged completions undone; and for fuzzed input, 5xx answers, malformed error bodies,
 * refused requests that wrote, hangs, sockets or timers a refused call left behind; and after a
 * soak, keys a drained queue should not hold, an end slower than its start, Redis's or a
 * consumer's memory not back to its baseline, completed-index entries left untrimmed; and for results and events, a completed job whose
 * result is not its handler's, a job whose `completed` events are not one (none unless completed),
 * a `completed` event before its job's last `active`; and for schedulers, a slot fired twice, a
 * fired job whose id is off its scheduler's slot grid, a fired job lost (never completed); and for
 * rate limits, a window of a limit's period holding more starts than the limit, a claim of a held
 * group before its hold's end, a start the check could not see; and for deduplication, an
 * unfinished job holding its key until finished that the key does not name (two holders at once),
 * a key without a TTL naming a finished job, a ttl key's jobs created less than its window apart,
 * a replace of a job already started; and for flows, a parent run before all its children
 * finished (or that saw one unfinished or missing), a parent released or run twice beyond what a
 * lapsed lease explains, a parent never released (or, a `fail-parent` child dead, never failed) at
 * the end, a flow's child lost or unfinished, a cross-queue flow link broken (test/flow-links.ts);
 * and for partitioned queues, a job outside its group's partition or with an id naming another;
 * and for durable steps, a job dead (none is meant to die), a step's function run again though its
 * earlier run was neither killed nor refused its record (`reruns_unexplained`), a sleep over or a
 * wait timed out before its time, an event not taken exactly once by each job it matches, a wait
 * without an event not timed out with null, a step record not as its handler left it; and for
 * cancel, a job whose cancel was answered `cancelled` or `cancelling` not ended cancelled, an
 * answer that does not say what happened (`finished` for a job not completed before it, a repeat
 * answered otherwise), a job the cancel found unfinished completed or claimed after it, a handler
 * run started after the cancel's answer (but the run of the claim it found running), a job
 * cancelled that no cancel named, a cancelled job's `cancelled` events not one, a running job's
 * cancel not heard by its run, onCancelled for a job not cancelled, a group's active count not
 * back to zero; and for expiry, a job without an expiry dead EMQEXPIRED, an expired job that ran
 * (a run logged, a claim it kept) or died before its expiry, a job started (its first claim kept)
 * after its expiry by the server's clock (or one the events and the run log cannot place before
 * it), a job started in time whose failed first attempt was not retried to completion, an expired
 * job's `dead` events not one, meta `expired` not the expired jobs' count, a job due in a pause
 * (2 s before its resume) swept only after the resume; and for concurrency keys, a sample of
 * `keyLimits()` with a key running more than its limit in force allows (a lowered limit's jobs
 * only drain) or reading a limit not the last one set, a claim of a job whose key ran its limit
 * already (the events stream replayed) or a replay not back to zero, more handler runs of a key
 * live at once (leases live, a killed consumer's runs cut at the kill) than the limit at the
 * latest of their claims, a key's running or parked count not back to zero at the end.
 */
export const MUST_BE_ZERO = [
  'jobs_lost',
  'duplicate_jobs',
  'reruns_unexplained',
  'invariant_violations',
  'not_finished',
  'completions_undone',
  'server_errors',
  'error_bodies_malformed',
  'refused_requests_that_wrote',
  'hangs',
  'orphans',
  'throughput_dropped',
  'redis_memory_not_back',
  'completed_index_stale',
  'consumer_memory_not_back',
  'handles_leaked',
  'results_wrong',
  'completed_events_not_once',
  'events_out_of_order',
  'slots_fired_twice',
  'job_ids_off_grid',
  'fired_jobs_lost',
  'rate_limit_exceeded',
  'starts_while_held',
  'starts_not_logged',
  'dedupe_keys_held_twice',
  'dedupe_keys_held_after_finish',
  'dedupe_windows_broken',
  'replaced_after_start',
  'parents_run_early',
  'parents_run_twice',
  'parents_never_released',
  'parents_never_failed',
  'wait_children_unfinished',
  'children_lost',
  'flow_link_violations',
  'jobs_misrouted',
  'dead_unexpected',
  'early_resumes',
  'events_not_once',
  'waits_wrong',
  'step_records_wrong',
  'cancels_not_kept',
  'cancel_answers_wrong',
  'completed_after_cancel',
  'claims_after_cancel',
  'runs_after_cancel',
  'cancelled_uncancelled',
  'cancelled_events_not_once',
  'cancels_not_heard',
  'hooks_wrong',
  'group_counts_left',
  'expired_without_expiry',
  'expired_but_ran',
  'expired_early',
  'started_after_expiry',
  'retries_not_run',
  'dead_events_not_once',
  'expired_count_wrong',
  'expired_after_resume',
  'starts_undecided',
  'key_limit_exceeded',
  'key_limits_wrong',
  'key_claims_over_limit',
  'key_events_unbalanced',
  'key_runs_over_limit',
  'key_slots_left',
  'key_starts_over_rate',
] as const;

/** The promises a result breaks, by name. */
export function broken(result: ScenarioResult): string[] {
  return MUST_BE_ZERO.filter((name) => typeof result[name] === 'number' && result[name] !== 0).map((name) => `${name}=${String(result[name])}`);
}
