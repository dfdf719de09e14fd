// The anchor of bench/cases/steps.ts: the case's 10-step program as a Cloudflare Workflow, run by
// `wrangler dev`'s local Workflows (workerd, offline). Plain JS: `cloudflare:workers` has no types
// in this repository's tsconfig.
import { WorkflowEntrypoint } from 'cloudflare:workers';

/** Run steps before the sleep, run steps in all, and the sleep (ms): the same as bench/cases/steps.ts. */
const BEFORE = 5;
const RUNS = 9;
const SLEEP_MS = 50;

/**
 * Nine `step.do` with trivial work, one `step.sleep` after the fifth. Each step's result is its
 * start and end (Date.now(): workerd's clock moves on I/O, and a step's work does none, so the two
 * are equal); `before` is the clock just before the sleep, its due time less SLEEP_MS at the
 * earliest. Once done, the marks go to REPORT_URL (outside a step: a report, not a step).
 */
export class Steps extends WorkflowEntrypoint {
  async run(event, step) {
    const marks = [];
    let before = 0;
    for (let i = 1; i <= RUNS; i++) {
      if (i === BEFORE + 1) {
        before = Date.now();
        await step.sleep('nap', SLEEP_MS);
      }
      marks.push(await step.do(`s${i}`, async () => {
        const s = Date.now();
        return { s, e: Date.now() };
      }));
    }
    await fetch(this.env.REPORT_URL, { method: 'POST', body: JSON.stringify({ id: event.instanceId, marks, before }) });
    return marks.length;
  }
}

export default {
  /** POST /create {ids}: an instance per id, 100 a createBatch (Cloudflare's most a call). */
  async fetch(request, env) {
    if (new URL(request.url).pathname !== '/create') return new Response('ok');
    const { ids } = await request.json();
    for (let i = 0; i < ids.length; i += 100) await env.STEPS.createBatch(ids.slice(i, i + 100).map((id) => ({ id })));
    return Response.json({ created: ids.length });
  },
};
