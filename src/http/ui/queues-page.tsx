/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { QueueCounts } from '../../job.js';
import type { QueueOverview } from '../../queue/registry.js';
import { HourChart } from './chart.js';
import { MAX_LIVE_QUEUES } from './shell.js';
import { Columns, Pager, Part, paths, StateBadge } from './widgets.js';

/**
 * The counts a row shows (`QueueCounts`), in the order a job goes through them: `sleeping` beside
 * `scheduled`, whose jobs in a durable sleep it counts again.
 */
export const COUNTED_STATES = ['pending', 'scheduled', 'sleeping', 'active', 'waiting', 'awaiting', 'completed', 'dead', 'cancelled'] as const satisfies ReadonlyArray<keyof QueueCounts>;

/** How many queues a page of the queues page shows: as many as one live response follows. */
export const QUEUES_PAGE = MAX_LIVE_QUEUES;

/**
 * The queues page: the registry's queues by name, a page at a time (those starting with `prefix`),
 * each with its counts per state (as `GET /v1/queues` answers them), whether it is paused, and its
 * last hour of completed and dead jobs.
 */
export const QueuesPage: FC<{ queues: readonly QueueOverview[]; prefix: string; offset: number }> = ({ queues, prefix, offset }) => (
  <Part live={queues.map((q) => q.queue)}>
    <h1>Queues</h1>
    <form class="inline" data-get="/ui" role="search" aria-label="Filter queues">
      <label>
        Name starts with
        <input name="prefix" class="wide" autocomplete="off" value={prefix} />
      </label>
      <button type="submit">Filter</button>
    </form>
    {queues.length === 0 ? (
      <p class="muted">{prefix === '' && offset === 0 ? 'No queue yet: a queue is listed once a job was enqueued to it.' : 'No queue here.'}</p>
    ) : (
      <div class="scroll">
        <table class="cards counts">
          <caption class="note">
            completed counts every job ever completed; the others count the jobs in that state now (sleeping: the scheduled jobs in a durable sleep, counted in scheduled too; awaiting: jobs waiting for an event; cancelled: jobs ended by a cancel, until cleaned). Last hour: jobs completed (green) and sent to dead (red) each minute, the current minute at the right
          </caption>
          <Columns names={['Queue', 'State', ...COUNTED_STATES, 'Last hour']} numeric={COUNTED_STATES} />
          <tbody>
            {queues.map((q) => (
              <tr data-queue={q.queue}>
                <th scope="row">
                  <a href={paths.queue(q.queue)}>{q.queue}</a>
                  {q.partitions === undefined ? null : <span class="muted"> ({q.partitions} partitions)</span>}
                </th>
                <td data-label="State">{q.paused ? <StateBadge state="paused" /> : <StateBadge state="running" />}</td>
                {COUNTED_STATES.map((s) => (
                  <td class="num" data-count={s} data-label={s}>
                    {q.counts[s]}
                  </td>
                ))}
                <td data-label="Last hour">
                  <HourChart completed={q.lastHour.completed} dead={q.lastHour.dead} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
    <Pager href={(o) => `/ui?${new URLSearchParams({ ...(prefix === '' ? {} : { prefix }), offset: String(o) }).toString()}`} offset={offset} size={QUEUES_PAGE} shown={queues.length} labels={['Previous', 'Next']} />
  </Part>
);
