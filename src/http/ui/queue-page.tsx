/** @jsxImportSource hono/jsx */
import type { Child, FC } from 'hono/jsx';
import type { JobRecord, JobState } from '../../job.js';
import type { QueueStats } from '../../queue/queue.js';
import type { SchedulerRecord } from '../../schedulers/schedulers.js';
import { HourChart } from './chart.js';
import { JobHead, JobRow } from './job-row.js';
import { Action, Columns, Pager, Part, paths, rateText, StateBadge, Time, utc } from './widgets.js';

/** How many jobs a page of the queue page shows. */
export const JOBS_PAGE = 25;

/** The states the queue page lists a tab of, in the order a job goes through them. */
export const LISTED_STATES = ['pending', 'scheduled', 'active', 'waiting', 'awaiting', 'completed', 'dead', 'cancelled'] as const satisfies readonly JobState[];

/** The order each state's jobs come in (`Queue.getJobs`), said above its table. */
const ORDER: Record<JobState, string> = {
  pending: 'in the order claims take them: the ungrouped jobs, then each group by name',
  scheduled: 'soonest due first (a job in a durable sleep is due when it wakes)',
  active: 'soonest lease end first',
  waiting: 'flow parents, and jobs whose step.invoke runs a child, waiting for their children, oldest first',
  awaiting: 'jobs waiting for an event, soonest timeout first',
  completed: 'newest first (completed rows are kept for the queue’s keepCompletedMs)',
  dead: 'newest first',
  cancelled: 'newest first (jobs ended by a cancel)',
};

/** The time column's heading for a state. */
const WHEN: Record<JobState, string> = { pending: 'Created', scheduled: 'Due', active: 'Lease ends', waiting: 'Created', awaiting: 'Created', completed: 'Finished', dead: 'Died', cancelled: 'Cancelled' };

/** A scheduler's spec in words: its cron and zone, or its period. */
const specText = (s: SchedulerRecord): string =>
  s.cron !== undefined ? `cron ${s.cron}${s.tz ? ` (${s.tz})` : ''}` : s.every !== undefined ? `every ${s.every} ms` : '-';

export interface QueuePageProps {
  readonly stats: QueueStats;
  readonly state: JobState;
  readonly offset: number;
  readonly jobs: readonly JobRecord[];
  readonly schedulers: readonly SchedulerRecord[];
  /** The groups table (GroupsTable), read on its own. */
  readonly groups: Child;
  /** The concurrency keys' section (KeysSection): nothing when the queue has none. */
  readonly keys: Child;
}

/**
 * A queue's page: its counts as tabs by state, a page of the chosen state's jobs, a search by id,
 * its groups, its concurrency keys (when it has any), its schedulers, its rate limit, and Pause or
 * Resume.
 */
export const QueuePage: FC<QueuePageProps> = ({ stats, state, offset, jobs, schedulers, groups, keys }) => {
  const q = stats.queue;
  const tab = (s: JobState) => paths.queue(q, `?state=${s}`);
  return (
    <Part live={[q]}>
      <p class="crumbs">
        <a href={paths.queues()}>Queues</a> / {q}
      </p>
      <h1>
        {q} {stats.paused ? <StateBadge state="paused" /> : null}
      </h1>
      <div class="actions">
        {stats.paused ? (
          <Action id="queue-toggle" verb="Resume" url={paths.api(q, 'resume')} confirm={`Resume queue ${q}? Its jobs start again.`} done={`Resumed ${q}`} />
        ) : (
          <Action id="queue-toggle" verb="Pause" url={paths.api(q, 'pause')} confirm={`Pause queue ${q}? Nothing new starts until it is resumed; what runs finishes.`} done={`Paused ${q}`} />
        )}
        <a href={paths.dead(q)}>Dead letters ({stats.counts.dead})</a>
        <span class="muted">Rate limit: {rateText(stats.rateLimits.queue)}</span>
      </div>
      <p class="legend">
        Last hour, completed (green) and dead (red) per minute: <HourChart completed={stats.lastHour.completed} dead={stats.lastHour.dead} />
      </p>
      <form class="inline" data-goto={paths.job(q, '')} role="search" aria-label="Find a job">
        <label>
          Job id
          <input name="id" class="wide" autocomplete="off" placeholder="JOB:42" required />
        </label>
        <button type="submit">Find</button>
      </form>
      <h2>Jobs</h2>
      <ul class="tabs" aria-label="Jobs by state">
        {LISTED_STATES.map((s) => (
          <li>
            <a href={tab(s)} aria-current={s === state ? 'page' : undefined}>
              {s} {s === 'completed' ? null : s === 'scheduled' && stats.counts.sleeping > 0 ? `(${stats.counts[s]}, ${stats.counts.sleeping} sleeping)` : `(${stats.counts[s]})`}
            </a>
          </li>
        ))}
      </ul>
      <p class="muted">
        {state}: {ORDER[state]}
      </p>
      {jobs.length === 0 ? (
        <p class="muted">No {state} jobs{offset > 0 ? ' on this page' : ''}.</p>
      ) : (
        <div class="scroll">
          <table class="cards" aria-label={`${state} jobs`}>
            <JobHead when={WHEN[state]} />
            <tbody>
              {jobs.map((job) => (
                <JobRow queue={q} job={job} when={WHEN[state]} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager href={(o) => paths.queue(q, `?state=${state}&offset=${o}`)} offset={offset} size={JOBS_PAGE} shown={jobs.length} />
      <h2>Groups</h2>
      {groups}
      {keys}
      <h2>Schedulers</h2>
      {schedulers.length === 0 ? (
        <p class="muted">No scheduler.</p>
      ) : (
        <div class="scroll">
          <table class="cards" aria-label="Schedulers">
            <Columns names={['Scheduler', 'Spec', 'Next run', 'Last run', 'Fired', 'Group']} numeric={['Fired']} />
            <tbody>
              {schedulers.map((s) => (
                <tr data-scheduler={s.id}>
                  <th scope="row">{s.id}</th>
                  <td data-label="Spec">{specText(s)}</td>
                  <td data-label="Next run">{s.nextRunAt === null ? <span class="muted">fires no more</span> : <Time ms={s.nextRunAt} />}</td>
                  <td data-label="Last run">
                    {s.lastRunAt === null ? (
                      <span class="muted">never</span>
                    ) : (
                      <a href={paths.job(q, `JOB:${s.id}@${s.lastRunAt}`)} title={`the job fired at ${utc(s.lastRunAt)}`}>
                        <Time ms={s.lastRunAt} />
                      </a>
                    )}
                  </td>
                  <td class="num" data-label="Fired">{s.fired}</td>
                  <td data-label="Group">{s.job.group ?? <span class="muted">-</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Part>
  );
};
