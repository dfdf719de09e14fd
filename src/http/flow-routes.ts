import { createRoute } from '@hono/zod-openapi';
import { body, failure, json, refusals } from './openapi-parts.js';
import { flowBody, flowNode, MAX_HTTP_FLOW_DEPTH, MAX_HTTP_FLOW_JOBS } from './flow-schemas.js';

/**
 * The route of flows (`Flows.add`; docs/design.md, "Flows"), with its request and response
 * schemas: one tree of jobs over any queues, written bottom-up in one round trip.
 */
export const flowsRoute = createRoute({
  method: 'post',
  path: '/v1/flows',
  summary: 'Enqueue a flow: a tree of jobs over any queues, each parent waiting until its children have finished',
  description: `The body is the root job; each job's \`children\` are the jobs it waits for (at most ${MAX_HTTP_FLOW_DEPTH} levels and ${MAX_HTTP_FLOW_JOBS} jobs in all). A job without an id gets \`<parent id>.<index>\` (the root a random one), so a tree sent again with the same root id is duplicates, not a second tree: no Idempotency-Key needed. A bad job is a 400 naming its path (\`children[2].queue\`), and nothing is written.`,
  request: { body: body(flowBody) },
  responses: {
    201: json(flowNode, 'written: the tree, each job with its id and state (`duplicate` for one that exists)'),
    200: json(flowNode, 'every job of the tree exists (the tree was sent before): nothing was written, each job `duplicate`'),
    413: failure('the body or a payload is over the cap (EMQTOOLARGE)'),
    ...refusals,
  },
});
