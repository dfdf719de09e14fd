/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { JobRecord } from '../../job.js';
import { Columns, paths, StateBadge, Time } from './widgets.js';

/** The first line of an error, cut to `max` characters. */
export const firstLine = (text: string | undefined, max = 120): string => {
  const line = (text ?? '').split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** The time that tells most about a job in its state: when it is due, its lease ends, or it finished. */
const whenOf = (job: JobRecord): number | undefined =>
  job.state === 'scheduled' ? job.runAt : job.state === 'active' ? job.leaseUntil : job.finishedAt ?? job.createdAt;

/** One job in a table: `<tr data-job>`, its id linking to its page; `actions` in a last cell. */
export const JobRow: FC<{ queue: string; job: JobRecord; when: string; actions?: unknown }> = ({ queue, job, when, actions }) => (
  <tr data-job={job.id}>
    <th scope="row">
      <a href={paths.job(queue, job.id)}>{job.id}</a>
    </th>
    <td data-label="State">
      <StateBadge state={job.state} />
      {job.state === 'active' && job.cancelReason !== undefined ? <span class="muted"> cancelling</span> : null}
    </td>
    <td data-label="Group">{job.group ?? <span class="muted">-</span>}</td>
    <td class="num" data-label="Attempt">
      {job.attempt}/{job.maxAttempts}
    </td>
    <td data-label={when}>
      <Time ms={whenOf(job)} />
    </td>
    <td class="wrap" data-label="Last error">{job.error ? firstLine(job.error) : null}</td>
    {actions === undefined ? null : <td>{actions}</td>}
  </tr>
);

/** The header of a table of JobRows. */
export const JobHead: FC<{ when: string; actions?: boolean }> = ({ when, actions }) => (
  <Columns names={['Job', 'State', 'Group', 'Attempt', when, 'Last error', ...(actions ? ['Actions'] : [])]} numeric={['Attempt']} />
);
