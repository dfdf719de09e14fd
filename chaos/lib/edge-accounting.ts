import type { Redis } from 'ioredis';
import type { FaultKind, InjectedFault } from '../../src/node/bridge/fault-proxy.js';
import type { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { checkResultsAndEvents, eventsStreamTrimmed } from './results-events.js';

/** Every string in a REST reply, base64-decoded as well (the client asks for base64 strings), joined. */
function replyText(reply: string): string {
  const texts: string[] = [reply];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(Buffer.from(value, 'base64').toString());
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  try {
    walk(JSON.parse(reply));
  } catch {
    // not JSON: the raw text is all there is
  }
  return texts.join('\n');
}

/**
 * Why each job that ran more than once did: the kind of the first fault, after its first run, that
 * hit a request naming the job (a settle or a beat for it in its request, a claim answering it in
 * its reply): what came after is the recovery. `no_fault_names_it` when none did (a lease that
 * lapsed under a slow beat with no fault of its own).
 */
function rerunsByFault(runs: ReadonlyMap<string, readonly number[]>, faults: readonly InjectedFault[]): Record<string, number> {
  const texts = faults
    .map((fault) => ({ kind: fault.kind, at: fault.at, text: `${fault.request}\n${fault.reply ? replyText(fault.reply) : ''}` }))
    .sort((a, b) => a.at - b.at);
  const out: Record<string, number> = {};
  for (const [id, times] of runs) {
    if (times.length < 2) continue;
    // the id whole: JOB:12 is not named by a request for JOB:121
    const named = new RegExp(`${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9])`);
    const cause = texts.find((t) => t.at >= times[0]! && t.at <= times.at(-1)! && named.test(t.text));
    const why: FaultKind | 'no_fault_names_it' = cause?.kind ?? 'no_fault_names_it';
    out[why] = (out[why] ?? 0) + 1;
  }
  return out;
}

/**
 * Every job of an edge scenario accounted for, once its queue is drained: the `jobs` payloads
 * `{n}` (0 to jobs - 1) enqueued by clients that retried with one key a job (`gaveUp` of them
 * never acknowledged), run by handlers that recorded each run's time in `runs` and returned n
 * doubled. Jobs lost or written twice, re-runs and what explains them, invariant violations, and
 * the results and events check.
 */
export async function accountForJobs(
  raw: Redis,
  queue: Queue<unknown>,
  jobs: number,
  gaveUp: number,
  runs: ReadonlyMap<string, readonly number[]>,
  injected: readonly InjectedFault[],
): Promise<Record<string, number | Record<string, number>>> {
  const name = queue.name;
  // every row: which job (payload n), its state, claims and result
  const rows: Array<{ id: string; n: number; state: string; attempts: number; result: string | undefined }> = [];
  const prefix = `emq:{${name}}:job:`;
  for (const key of await raw.keys(`${prefix}*`)) {
    const [d, s, a, r] = await raw.hmget(key, 'd', 's', 'a', 'r');
    const n = (JSON.parse(d ?? '{}') as { n: number }).n;
    rows.push({ id: key.slice(prefix.length), n, state: s ?? '', attempts: Number(a ?? 0), result: r ?? undefined });
  }
  const perN = new Map<number, number>();
  for (const row of rows) perN.set(row.n, (perN.get(row.n) ?? 0) + 1);
  const duplicates = [...perN.values()].reduce((sum, c) => sum + (c - 1), 0);
  const lost = Array.from({ length: jobs }, (_, n) => n).filter((n) => !perN.has(n)).length - gaveUp;
  const rerun = [...runs.values()].filter((times) => times.length > 1).length;
  // a job run again was claimed again: its first lease lapsed (its reply or its settle lost)
  const unexplained = rows.filter((row) => (runs.get(row.id)?.length ?? 0) > row.attempts).length;
  const violations = await checkInvariants(raw, name);
  const nOf = new Map(rows.map((row) => [row.id, row.n]));
  const checked = await checkResultsAndEvents(queue, rows, (id) => ({ n: nOf.get(id)! * 2 }), await eventsStreamTrimmed(raw, name));
  return {
    jobs_lost: Math.max(0, lost),
    duplicate_jobs: duplicates,
    ran_more_than_once: rerun,
    reruns_by_fault: rerunsByFault(runs, injected),
    reruns_unexplained: unexplained,
    invariant_violations: violations.length,
    ...checked,
  };
}
