/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { JobRecord } from '../../job.js';
import { JobHead, JobRow } from './job-row.js';
import { Action, Pager, Part, paths } from './widgets.js';

/** How many dead jobs a page shows. */
export const DEAD_PAGE = 50;

/**
 * A queue's dead letters, newest first: each with Reprocess (back to pending, its attempts anew)
 * and Remove, and both for every job shown, each after a confirmation.
 */
export const DeadPage: FC<{ queue: string; jobs: readonly JobRecord[]; offset: number; total: number }> = ({ queue: q, jobs, offset, total }) => (
  <Part live={[q]}>
    <p class="crumbs">
      <a href={paths.queues()}>Queues</a> / <a href={paths.queue(q)}>{q}</a> / dead letters
    </p>
    <h1>Dead letters of {q}</h1>
    <p class="muted">
      {total} dead job{total === 1 ? '' : 's'}, newest first. Reprocess sends a job back to pending with its attempts anew.
    </p>
    {jobs.length === 0 ? (
      <p class="muted">No dead job{offset > 0 ? ' on this page' : ''}.</p>
    ) : (
      <>
        <div class="actions">
          <button type="button" data-bulk="Reprocess">
            Reprocess all shown
          </button>
          <button type="button" class="danger" data-bulk="Remove">
            Remove all shown
          </button>
        </div>
        <div class="scroll">
          <table class="cards" aria-label="Dead jobs">
            <JobHead when="Died" actions />
            <tbody>
              {jobs.map((job) => (
                <JobRow
                  queue={q}
                  job={job}
                  when="Died"
                  actions={
                    <div class="actions">
                      <Action verb="Reprocess" label={`Reprocess ${job.id}`} url={paths.api(q, 'jobs', job.id, 'reprocess')} confirm={`Reprocess ${job.id}? It goes back to pending and runs again.`} done={`Reprocessed ${job.id}`} />
                      <Action verb="Remove" label={`Remove ${job.id}`} method="DELETE" danger url={paths.api(q, 'jobs', job.id)} confirm={`Remove ${job.id}? Its row is deleted for good.`} done={`Removed ${job.id}`} />
                    </div>
                  }
                />
              ))}
            </tbody>
          </table>
        </div>
      </>
    )}
    <Pager href={(o) => paths.dead(q, `?offset=${o}`)} offset={offset} size={DEAD_PAGE} shown={jobs.length} />
  </Part>
);
