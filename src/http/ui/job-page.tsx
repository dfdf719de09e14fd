/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { QueueEvent } from '../../events/events.js';
import type { JobRecord } from '../../job.js';
import { CancelForm, CancelNote, offersCancel } from './cancel-form.js';
import { ParkedNote, parkedOn } from './concurrency-keys.js';
import { currentStep, SendEventForm, StepsTimeline, Suspension } from './steps-timeline.js';
import { Action, Columns, Json, Part, paths, StateBadge, Time } from './widgets.js';

/** What a job's timeline shows of one event beyond its name and time. */
function detail(e: QueueEvent): string {
  const parts: string[] = [];
  const add = (name: string, value: unknown) => {
    if (value !== undefined && value !== null) parts.push(`${name} ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  };
  if ('attempt' in e) add('attempt', e.attempt);
  if ('dueAt' in e && typeof e.dueAt === 'number') add('due', new Date(e.dueAt).toISOString());
  if ('error' in e && typeof e.error === 'string') add('error', e.error.split('\n', 1)[0]);
  if ('progress' in e) add('progress', e.progress);
  if ('result' in e) add('result', e.result);
  if (e.event === 'step') add('step', `${JSON.stringify(e.name)} ${e.state}`);
  if (e.event === 'cancelled' || e.event === 'cancelling') add('reason', e.reason);
  if (e.event === 'parked') add('key', e.key);
  return parts.join(', ');
}

/** Where the timeline comes from, and what it could not show. */
export interface Timeline {
  /** The job's events, oldest first. */
  readonly events: readonly QueueEvent[];
  /** Why there is no timeline, or why it may be partial; undefined when whole. */
  readonly note?: string;
}

/** What Remove's confirmation adds for a job in the middle of something: its run fenced off, its wait or sleep ended. */
function removeNote(job: JobRecord): string {
  if (job.state === 'active') return '; the run going on is fenced off';
  const step = currentStep(job);
  if (step?.kind === 'wait') return `; it stops waiting for event ${step.event ?? ''}, and no event resumes it`;
  if (step?.kind === 'sleep') return '; its sleep ends with it';
  return '';
}

/**
 * A job's page: its state (and what a suspended job waits for, the key a parked one waits for,
 * why a cancelled one ended, that a running one is being cancelled), payload, result or error (with
 * its stack), progress, attempts, group, concurrency keys, scheduler, flow parent and children, its
 * durable steps, its timeline from the events stream, and Reprocess (when dead), Send event (when
 * awaiting), Cancel (when unfinished) and Remove. `now` is the server's clock at render, for "until ... (in 4 min)".
 */
export const JobPage: FC<{ queue: string; job: JobRecord; timeline: Timeline; now: number }> = ({ queue: q, job, timeline, now }) => (
  <Part live={[q]}>
    <p class="crumbs">
      <a href={paths.queues()}>Queues</a> / <a href={paths.queue(q, `?state=${job.state}`)}>{q}</a> / {job.id}
    </p>
    <h1>
      {job.id} <StateBadge state={job.state} />
    </h1>
    <Suspension job={job} now={now} />
    {/* a timeline cut short may not end with the job's last event */}
    <ParkedNote parked={timeline.note === undefined ? parkedOn(job, timeline.events) : undefined} />
    <CancelNote job={job} />
    <div class="actions job-actions">
      {job.state === 'dead' ? (
        <Action verb="Reprocess" url={paths.api(q, 'jobs', job.id, 'reprocess')} confirm={`Reprocess ${job.id}? It goes back to pending and runs again.`} done={`Reprocessed ${job.id}`} />
      ) : null}
      {offersCancel(job) ? <CancelForm queue={q} job={job} /> : null}
      <Action verb="Remove" method="DELETE" danger url={paths.api(q, 'jobs', job.id)} confirm={`Remove ${job.id}? Its row is deleted for good${removeNote(job)}.`} done={`Removed ${job.id}`} then={paths.queue(q)} />
    </div>
    {job.state === 'awaiting' ? <SendEventForm queue={q} job={job} /> : null}
    <dl class="facts">
      <dt>Attempt</dt>
      <dd>
        {job.attempt} of {job.maxAttempts} ({job.attemptsStarted} started in all)
      </dd>
      <dt>Group</dt>
      <dd>{job.group === undefined ? <span class="muted">none</span> : <a href={paths.group(q, job.group)}>{job.group}</a>}</dd>
      {job.keys === undefined ? null : (
        <>
          <dt>Keys</dt>
          <dd data-field="keys">{job.keys.join(', ')}</dd>
        </>
      )}
      <dt>Priority</dt>
      <dd>{job.priority}</dd>
      <dt>Created</dt>
      <dd>
        <Time ms={job.createdAt} />
      </dd>
      {job.runAt === undefined ? null : (
        <>
          <dt>Due</dt>
          <dd>
            <Time ms={job.runAt} />
          </dd>
        </>
      )}
      {job.expiresAt === undefined ? null : (
        <>
          <dt>{job.state === 'dead' && job.error?.startsWith('EMQEXPIRED') ? 'Expired at' : 'Expires unless started by'}</dt>
          <dd>
            <Time ms={job.expiresAt} />
          </dd>
        </>
      )}
      {job.timeoutMs === undefined ? null : (
        <>
          <dt>Own timeout</dt>
          <dd>{job.timeoutMs} ms</dd>
        </>
      )}
      {job.timeoutAt === undefined ? null : (
        <>
          <dt>Wait times out</dt>
          <dd>
            <Time ms={job.timeoutAt} />
          </dd>
        </>
      )}
      {job.leaseUntil === undefined ? null : (
        <>
          <dt>Lease ends</dt>
          <dd>
            <Time ms={job.leaseUntil} />
          </dd>
        </>
      )}
      {job.finishedAt === undefined ? null : (
        <>
          <dt>{job.state === 'cancelled' ? 'Cancelled' : 'Finished'}</dt>
          <dd>
            <Time ms={job.finishedAt} />
          </dd>
        </>
      )}
      <dt>Backoff</dt>
      <dd>
        {job.backoff.type}, {job.backoff.delayMs} ms
      </dd>
      {job.scheduler === undefined ? null : (
        <>
          <dt>Scheduler</dt>
          <dd>
            {job.scheduler.id}, slot <Time ms={job.scheduler.slot} />
          </dd>
        </>
      )}
      {job.parent === undefined ? null : (
        <>
          <dt>Parent</dt>
          <dd>
            <a href={paths.job(job.parent.queue, job.parent.id)}>
              {job.parent.queue} / {job.parent.id}
            </a>{' '}
            <span class="muted">(if this job dies: {job.parent.onFailure})</span>
          </dd>
        </>
      )}
      {job.flow === undefined ? null : (
        <>
          <dt>Children</dt>
          <dd>
            {job.flow.done} of {job.flow.total} finished
          </dd>
        </>
      )}
    </dl>
    {job.steps === undefined || job.steps.length === 0 ? null : (
      <>
        <h2>Steps</h2>
        <StepsTimeline job={job} />
      </>
    )}
    {job.children === undefined || job.children.length === 0 ? null : (
      <>
        <h2>Children</h2>
        <div class="scroll">
          <table aria-label="Children">
            <Columns names={['Job', 'Queue', 'Outcome']} />
            <tbody>
              {job.children.map((child) => (
                <tr data-child={child.id}>
                  <th scope="row">
                    <a href={paths.job(child.queue, child.id)}>{child.id}</a>
                  </th>
                  <td>{child.queue}</td>
                  <td>
                    <StateBadge state={child.state === 'failed' ? 'dead' : child.state === 'unfinished' ? 'pending' : 'completed'} /> {child.state}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </>
    )}
    <h2>Payload</h2>
    <Json value={job.payload} label="Payload" />
    {job.state === 'completed' ? (
      <>
        <h2>Result</h2>
        {job.result === undefined ? <p class="muted">The handler returned nothing.</p> : <Json value={job.result} label="Result" />}
      </>
    ) : null}
    {job.error === undefined ? null : (
      <>
        <h2>{job.state === 'dead' ? 'Error' : 'Last error'}</h2>
        <pre aria-label="Error">{job.error}</pre>
      </>
    )}
    {job.progress === undefined ? null : (
      <>
        <h2>Progress</h2>
        <Json value={job.progress} label="Progress" />
      </>
    )}
    <h2>Timeline</h2>
    {timeline.note ? <p class="muted">{timeline.note}</p> : null}
    {timeline.events.length === 0 ? null : (
      <div class="scroll">
        <table class="cards" aria-label="Timeline">
          <Columns names={['When', 'Event', 'Detail']} />
          <tbody>
            {timeline.events.map((e) => (
              <tr>
                <td data-label="When">
                  <Time ms={e.time} precise />
                </td>
                <td data-label="Event">{e.event}</td>
                <td class="wrap" data-label="Detail">{detail(e)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
  </Part>
);
