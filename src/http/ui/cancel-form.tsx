/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { JobRecord, JobState } from '../../job.js';
import { CANCELLABLE_STATES, DEFAULT_CANCEL_REASON, MAX_CANCEL_REASON } from '../../queue/cancels.js';
import { currentStep } from './steps-timeline.js';
import { paths, Time } from './widgets.js';

/**
 * Cancel on a job's page (docs/guides/job-controls.md): the form that cancels an unfinished job
 * through the public route (`POST /v1/queues/:q/jobs/:id/cancel`), with an optional reason, after
 * a confirmation that says what the cancel does to this job; and the sentence at the top of the
 * page of a job cancelled, or running with its cancel asked.
 */

const CANCELLABLE: ReadonlySet<JobState> = new Set(CANCELLABLE_STATES);

/** Whether the job's cancel was asked while it ran, and its run has not ended yet. */
const cancelling = (job: JobRecord): boolean => job.state === 'active' && job.cancelReason !== undefined;

/** Whether the page offers Cancel: an unfinished job not already being cancelled (a second cancel would answer as the first). */
export const offersCancel = (job: JobRecord): boolean => CANCELLABLE.has(job.state) && !cancelling(job);

/** What Cancel's confirmation says it does to this job: a running one is told, any other ends now. */
function consequence(job: JobRecord): string {
  if (job.state === 'active') return 'It is running: its handler is told to stop, and the run ends cancelled when it settles, whatever it returns';
  const step = currentStep(job);
  const parts = ['It ends cancelled now and never runs'];
  if (step?.kind === 'wait') parts.push(`it stops waiting for event ${step.event ?? ''}`);
  if (job.flow !== undefined) parts.push('its unfinished children are cancelled too');
  if (job.parent !== undefined) parts.push(`its parent reads it as a failed child (on failure: ${job.parent.onFailure})`);
  return parts.join('; ');
}

/**
 * The Cancel form (the script's `form[data-url]` with `data-body="cancel"`): a reason (empty sends
 * none: the default) and the button, confirmed in the dialog whose buttons read "Cancel job" and
 * "Keep job" (not "Cancel" twice). The status says what the API answered: cancelled, or cancelling.
 */
export const CancelForm: FC<{ queue: string; job: JobRecord }> = ({ queue: q, job }) => (
  <form
    class="inline cancel-job"
    aria-label="Cancel job"
    data-url={paths.api(q, 'jobs', job.id, 'cancel')}
    data-method="POST"
    data-body="cancel"
    data-fill
    data-verb="Cancel job"
    data-dismiss="Keep job"
    data-confirm={`Cancel ${job.id}? ${consequence(job)}.`}
    data-done={`${job.id} is {state}`}
  >
    <label>
      Reason (optional)
      <input name="reason" class="wide" autocomplete="off" maxlength={MAX_CANCEL_REASON} />
    </label>
    <button type="submit" class="danger" data-verb="Cancel job">
      Cancel job
    </button>
  </form>
);

/** `: “why”`, or ` (no reason given)` for the default reason (what a cancel without one keeps). */
const why = (reason: string | undefined): string =>
  reason === undefined || reason === DEFAULT_CANCEL_REASON ? ' (no reason given)' : `: “${reason}”`;

/** At the top of the page: why a cancelled job ended, or that a running one is being cancelled. Nothing for any other job. */
export const CancelNote: FC<{ job: JobRecord }> = ({ job }) => {
  if (job.state === 'cancelled') {
    return (
      <p class="suspension" data-cancel="cancelled">
        This job was cancelled
        {job.finishedAt === undefined ? null : (
          <>
            {' '}
            at <Time ms={job.finishedAt} />
          </>
        )}
        {why(job.cancelReason)}.
      </p>
    );
  }
  if (!cancelling(job)) return null;
  return (
    <p class="suspension" data-cancel="cancelling">
      This job is being cancelled{why(job.cancelReason)}. Its handler was told to stop; the run ends cancelled when it settles.
    </p>
  );
};
