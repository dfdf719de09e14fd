import type { Redis } from 'ioredis';
import type { QueueEvent } from '../../src/events/events.js';
import type { Queue } from '../../src/queue/queue.js';

/**
 * The events cap a chaos scenario sets on its queue (`setEvents({maxLen})`), far above what one
 * run appends (an entry per script call: a full killed-consumers run appends about 10^4), so the
 * stream keeps every event of the run and a count read from it is the whole story.
 */
export const CHAOS_EVENTS_MAX_LEN = 1_000_000;

/** One job row as a scenario read it: its id (`JOB:...`), its state and its result's JSON (`r`). */
export interface FinishedRow {
  readonly id: string;
  readonly state: string;
  readonly result: string | undefined;
}

/**
 * What the results and the events stream say about a run, each count a promise (must be 0):
 *
 * - `results_wrong`: completed jobs whose row's result (`r`) is not the one their handler returned
 *   (`expected(id)`), or whose `completed` event carries another one (an event that left its
 *   result out for its size is not compared).
 * - `completed_events_not_once`: jobs whose `completed` events are not exactly one for a completed
 *   row, or not none for any other (a dead job, a job with no row).
 * - `events_out_of_order`: jobs with a `completed` event before their last `active` (an `active`
 *   after `completed`), or with none before it.
 *
 * `events` and `events_stream_trimmed` say what was read: every event of the stream, page by page,
 * and whether Redis ever trimmed it (see eventsStreamTrimmed: the counts would be unsound, so a
 * trimmed stream adds one to `completed_events_not_once`).
 */
export interface ResultsAndEvents {
  readonly results_wrong: number;
  readonly completed_events_not_once: number;
  readonly events_out_of_order: number;
  readonly events: number;
  readonly events_stream_trimmed: number;
}

/**
 * Whether any entry of queue `name`'s events stream was ever deleted (trimmed to its cap): XINFO
 * STREAM's `entries-added` (Redis 7: every entry the key ever took) above its `length`. (Its
 * `max-deleted-entry-id` moves on XDEL only, not on a trim.) False when there is no stream.
 */
export async function eventsStreamTrimmed(raw: Redis, name: string): Promise<boolean> {
  const key = `emq:{${name}}:events`;
  if ((await raw.exists(key)) === 0) return false;
  const info = (await raw.call('XINFO', 'STREAM', key)) as unknown[];
  const field = (name: string): number => {
    const at = info.indexOf(name);
    if (at < 0) throw new Error(`XINFO STREAM has no ${name}: Redis 7 or later is needed to tell a trimmed stream`);
    return Number(info[at + 1]);
  };
  return field('entries-added') > field('length');
}

/** Every event of the queue's stream, oldest first, read with `readEvents` a page at a time. */
export async function readAllEvents(queue: Queue<unknown>): Promise<QueueEvent[]> {
  const all: QueueEvent[] = [];
  let after = '0';
  for (;;) {
    const page = await queue.readEvents({ after, limit: 1000 });
    all.push(...page.events);
    if (page.next === after) return all;
    after = page.next;
  }
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

const parsed = (text: string | undefined): { value: unknown } | undefined => {
  if (text === undefined) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
};

/**
 * Checks the rows' results and the queue's events stream after a run (see ResultsAndEvents).
 * `trimmed` says whether any entry of the stream was deleted (eventsStreamTrimmed).
 */
export async function checkResultsAndEvents(
  queue: Queue<unknown>,
  rows: readonly FinishedRow[],
  expected: (id: string) => unknown,
  trimmed: boolean,
): Promise<ResultsAndEvents> {
  const events = await readAllEvents(queue);
  /** Per job: its `completed` events' positions and results, and its last `active`'s position. */
  const perJob = new Map<string, { completed: Array<{ at: number; result: unknown; omitted: boolean }>; lastActive: number }>();
  const of = (id: string) => {
    let job = perJob.get(id);
    if (job === undefined) perJob.set(id, (job = { completed: [], lastActive: -1 }));
    return job;
  };
  events.forEach((event, at) => {
    if (event.event === 'active') of(event.jobId).lastActive = at;
    else if (event.event === 'completed') of(event.jobId).completed.push({ at, result: event.result, omitted: event.resultOmitted });
  });

  let resultsWrong = 0;
  let notOnce = trimmed ? 1 : 0;
  for (const row of rows) {
    const job = perJob.get(row.id);
    const completedEvents = job?.completed.length ?? 0;
    if (row.state !== 'completed') {
      if (completedEvents !== 0) notOnce++;
      continue;
    }
    if (completedEvents !== 1) notOnce++;
    const want = expected(row.id);
    const stored = parsed(row.result);
    const eventWrong = job?.completed.some((c) => !c.omitted && !sameJson(c.result, want)) ?? false;
    if (stored === undefined || !sameJson(stored.value, want) || eventWrong) resultsWrong++;
  }
  const rowIds = new Set(rows.map((row) => row.id));
  let outOfOrder = 0;
  for (const [id, job] of perJob) {
    if (!rowIds.has(id) && job.completed.length > 0) notOnce++;
    const first = job.completed[0];
    if (first !== undefined && (job.lastActive < 0 || job.lastActive > first.at)) outOfOrder++;
  }
  return {
    results_wrong: resultsWrong,
    completed_events_not_once: notOnce,
    events_out_of_order: outOfOrder,
    events: events.length,
    events_stream_trimmed: trimmed ? 1 : 0,
  };
}
