/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { JobRecord, JobState } from '../../job.js';
import type { StepRecord, StepState } from '../../steps/steps.js';
import { firstLine } from './job-row.js';
import { Columns, paths, Time, utc } from './widgets.js';

/**
 * A job's durable steps on its page (docs/guides/steps.md): the sentence that says what a
 * suspended job waits for, the table of its steps in order, and the form that sends the event an
 * awaiting job waits for.
 */

/** The job state each suspended step state parks its job in: a `sleeping` step's job is `scheduled`, and so on. */
const PARKED: Partial<Record<StepState, JobState>> = { sleeping: 'scheduled', waiting: 'awaiting', invoking: 'waiting' };

/**
 * The step the job is parked on now: its last step in a suspended state, when the job's own state
 * is that suspension's (a sleeping step of a job claimed since is no longer what it waits on).
 */
export function currentStep(job: JobRecord): StepRecord | undefined {
  const steps = job.steps ?? [];
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    const parked = PARKED[step.state];
    if (parked !== undefined) return parked === job.state ? step : undefined;
  }
  return undefined;
}

/** A compact JSON value cut to `max` characters, for a table cell (the whole of it is the cell's title). */
const shortJson = (value: unknown, max = 64): { text: string; whole: string } => {
  const whole = JSON.stringify(value) ?? 'undefined';
  return { text: whole.length > max ? `${whole.slice(0, max - 1)}…` : whole, whole };
};

/** How far `ms` is from `now`, coarsely (the page reloads on news, or every 30 s at least): `in 4 min`, `due now`. */
export function fromNow(ms: number, now: number): string {
  const s = Math.round((ms - now) / 1000);
  if (s <= 0) return 'due now';
  if (s < 90) return `in ${s} s`;
  if (s < 90 * 60) return `in ${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `in ${Math.round(s / 3600)} h`;
  return `in ${Math.round(s / 86_400)} d`;
}

/**
 * When a step finished: its time of day alone when it is the day it started (the date is in
 * Started, a column to the left; the whole of it in the title), so the Detail column keeps room.
 */
const Finished: FC<{ step: StepRecord }> = ({ step }) => {
  const { startedAt: start, finishedAt: end } = step;
  if (end === undefined || start === undefined || utc(start).slice(0, 10) !== utc(end).slice(0, 10)) return <Time ms={end} precise />;
  return (
    <time datetime={new Date(end).toISOString()} title={utc(end, true)}>
      {utc(end, true).slice(11)}
    </time>
  );
};

/** A step's state: a badge whose word is its state, coloured by what it means. */
export const StepBadge: FC<{ state: StepState }> = ({ state }) => <span class={`state step-${state}`}>{state}</span>;

/** `step 2 “nap”`: how the page names a step in a sentence. */
const stepName = (step: StepRecord): string => `step ${step.index} “${step.name}”`;

/** A wait's timeout: the job's while it waits (the awaiting set's score), else the one its step recorded. */
const timeoutOf = (job: JobRecord, step: StepRecord, current: boolean): number | undefined => (current ? job.timeoutAt ?? step.until : step.until);

/**
 * What a suspended job waits for, in words, at the top of its page: `This job is asleep until …`,
 * `… is waiting for event email.verified until …`, `… is waiting for child …`. Nothing for a job
 * that is not parked on a step.
 */
export const Suspension: FC<{ job: JobRecord; now: number }> = ({ job, now }) => {
  const step = currentStep(job);
  if (step === undefined) return null;
  const at = (ms: number | undefined) =>
    ms === undefined ? null : (
      <>
        {' '}
        until <Time ms={ms} /> <span class="muted">({fromNow(ms, now)})</span>
      </>
    );
  return (
    <p class="suspension" data-suspension={step.kind}>
      {step.kind === 'sleep' ? (
        <>This job is asleep{at(step.until ?? job.runAt)}</>
      ) : step.kind === 'wait' ? (
        <>
          This job is waiting for event <code>{step.event ?? '?'}</code>
          {timeoutOf(job, step, true) === undefined ? ' with no timeout' : at(timeoutOf(job, step, true))}
        </>
      ) : step.child !== undefined ? (
        <>
          This job is waiting for child{' '}
          <a href={paths.job(step.child.queue, step.child.id)}>
            {step.child.queue} / {step.child.id}
          </a>
        </>
      ) : (
        <>This job is waiting for its child</>
      )}
      , at {stepName(step)}.
    </p>
  );
};

/** What a step's row says beyond its columns: a sleep's due time, a wait's event, an invoke's child, a run's result or error. */
const Detail: FC<{ job: JobRecord; step: StepRecord; current: boolean }> = ({ job, step, current }) => {
  const result = step.result === undefined ? null : <Short label={step.kind === 'wait' ? 'data' : 'result'} value={step.result} />;
  switch (step.kind) {
    case 'sleep':
      return (
        <>
          until <Time ms={step.until} />
        </>
      );
    case 'wait': {
      const timeout = timeoutOf(job, step, current);
      return (
        <>
          event <code>{step.event ?? '?'}</code>
          {step.state === 'timed-out' ? (
            <>
              , timed out at <Time ms={timeout} /> (resolved null)
            </>
          ) : step.state !== 'waiting' ? null : timeout === undefined ? (
            ', no timeout'
          ) : (
            <>
              , times out <Time ms={timeout} />
            </>
          )}
          {step.eventId === undefined ? null : (
            <>
              , took event id <code data-event-id>{step.eventId}</code>
            </>
          )}
          {result === null ? null : <>, {result}</>}
        </>
      );
    }
    case 'invoke':
      return (
        <>
          {step.child === undefined ? (
            'child'
          ) : (
            <>
              child{' '}
              <a href={paths.job(step.child.queue, step.child.id)}>
                {step.child.queue} / {step.child.id}
              </a>
            </>
          )}
          {result === null ? null : <>, {result}</>}
        </>
      );
    default:
      return step.error !== undefined ? (
        <span class="step-error" title={step.error}>
          {firstLine(step.error)}
        </span>
      ) : (
        result
      );
  }
};

/** A JSON value, cut short, named: `result {"id":7}`. */
const Short: FC<{ label: string; value: unknown }> = ({ label, value }) => {
  const { text, whole } = shortJson(value);
  return (
    <>
      {label} <code title={whole === text ? undefined : whole}>{text}</code>
    </>
  );
};

/**
 * A job's steps as a timeline: one row per step in index order, with its kind, state, attempts,
 * start and finish, and what it did or waits on; the step the job is parked on is marked.
 */
export const StepsTimeline: FC<{ job: JobRecord }> = ({ job }) => {
  const steps = job.steps ?? [];
  const current = currentStep(job);
  return (
    <div class="scroll">
      <table class="cards steps" aria-label="Steps">
        <Columns names={['#', 'Step', 'Kind', 'State', 'Attempts', 'Started', 'Finished', 'Detail']} numeric={['#', 'Attempts']} />
        <tbody>
          {steps.map((step) => {
            const now = step === current;
            return (
              <tr data-step={String(step.index)} class={now ? 'current' : undefined} aria-current={now ? 'step' : undefined}>
                <td class="num" data-label="Step">
                  {step.index}
                </td>
                <th scope="row" class="wrap">
                  {step.name}
                </th>
                <td data-label="Kind">{step.kind}</td>
                <td data-label="State">
                  <StepBadge state={step.state} />
                  {now ? <span class="muted"> now</span> : null}
                </td>
                <td class="num" data-label="Attempts">
                  {step.kind === 'run' ? step.attempts : <span class="muted">-</span>}
                </td>
                <td data-label="Started">
                  <Time ms={step.startedAt} precise />
                </td>
                <td data-label="Finished">
                  <Finished step={step} />
                </td>
                <td class="wrap" data-label="Detail">
                  <Detail job={job} step={step} current={now} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
};

/**
 * The form that sends the event an awaiting job waits for (`POST /v1/queues/:q/events/:name`, the
 * script's `form[data-url]` with `data-body="event"`): its name prefilled from the waiting step,
 * its data as JSON, sent after a confirmation. An event reaches every waiter of the queue, so the
 * confirmation says so, and the status says how many it resumed (`{resumed}` of the answer).
 */
export const SendEventForm: FC<{ queue: string; job: JobRecord }> = ({ queue: q, job }) => {
  const step = currentStep(job);
  return (
    <form
      class="send-event"
      aria-label="Send event"
      data-url={`${paths.api(q, 'events')}/{event}`}
      data-method="POST"
      data-body="event"
      data-fill
      data-verb="Send event"
      data-confirm={`Send event {event} to queue ${q}? Every job of ${q} waiting for {event} whose match the data meets resumes with it (this one, when it does).`}
      data-done="Sent event {event} (id {id}): {resumed} job(s) resumed"
    >
      <fieldset>
        <legend>Send event</legend>
        <p class="muted">
          The event goes to every job of {q} waiting for it whose wait’s <code>match</code> the data meets; each resumes with the data as its step’s result.
        </p>
        <div class="fields">
          <label>
            Event
            <input name="event" class="wide" autocomplete="off" required pattern="[A-Za-z0-9._\-]{1,128}" value={step?.event ?? ''} />
          </label>
          <label class="grow">
            Data (JSON)
            <textarea name="data" rows={4} spellcheck={false}>
              {'{}'}
            </textarea>
          </label>
        </div>
        <div class="actions">
          <button type="submit" class="primary" data-verb="Send event">
            Send event
          </button>
        </div>
      </fieldset>
    </form>
  );
};
