import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import type { FlowJob, FlowNode, Flows } from '../flows/flows.js';
import { flowBody, type FlowJobBody, flowNode, MAX_HTTP_FLOW_DEPTH, MAX_HTTP_FLOW_JOBS } from './flow-schemas.js';
import { body, failure, json, refusals, type Validated } from './openapi-parts.js';
import { problem } from './problem.js';

/**
 * The route of flows (`Flows.add`; docs/design.md, "Flows"), with its request and response
 * schemas: one tree of jobs over any queues, written bottom-up in one round trip.
 */

/** What the flows route needs of the app that serves it (`E`: its hono environment). */
export interface FlowWiring<E extends Env> {
  /** The Flows of a request, for a tree over `queues` (the app's cache of one Flows per transport). */
  readonly flowsOf: (c: Context<E>, queues: ReadonlySet<string>) => Flows;
  /** The body limit of the route (the bulk route's: a flow holds up to 1000 payloads). */
  readonly bodyLimit: MiddlewareHandler<E>;
  /** Told, per queue, when the earliest job the flow wrote there may run (the app's after-enqueue hook). */
  readonly afterEnqueue: (c: Context<E>, queue: string, dueAt: number) => void;
}

const flowsRoute = createRoute({
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

/** A path in a tree as `Flows.add` names it: `children[0].children[2].queue`. */
export function flowPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out === '' ? String(key) : `${out}.${String(key)}`), '');
}

/** A body's node as `Flows.add` takes it: `runAt` read from ISO text, its children alike. */
function toFlowJob(body: FlowJobBody): FlowJob {
  const { runAt, children, payload, ...options } = body;
  return {
    ...options,
    payload,
    ...(runAt === undefined ? {} : { runAt: typeof runAt === 'string' ? Date.parse(runAt) : runAt }),
    ...(children === undefined ? {} : { children: children.map(toFlowJob) }),
  };
}

/** Every queue of the tree. */
function queuesOf(body: FlowJobBody, into = new Set<string>()): Set<string> {
  into.add(body.queue);
  for (const child of body.children ?? []) queuesOf(child, into);
  return into;
}

/** Per queue, when the earliest job written there may run, by this runtime's clock (`written` beside `sent`, node for node). */
function dueTimes(sent: FlowJobBody, written: FlowNode, now: number, into = new Map<string, number>()): Map<string, number> {
  let due: number | undefined;
  if (written.state === 'pending') due = now;
  else if (written.state === 'scheduled') {
    due = sent.runAt === undefined ? now + (sent.delayMs ?? 0) : typeof sent.runAt === 'string' ? Date.parse(sent.runAt) : sent.runAt;
  }
  if (due !== undefined) into.set(written.queue, Math.min(due, into.get(written.queue) ?? due));
  written.children.forEach((child, i) => dueTimes(sent.children![i]!, child, now, into));
  return into;
}

/** Whether no job of the tree was written. */
const allDuplicates = (node: FlowNode): boolean => node.state === 'duplicate' && node.children.every(allDuplicates);

/**
 * Serves `POST /v1/flows` on `app`: the tree checked by its schema (a 400 naming the path as
 * `Flows.add` names it, nothing written), then one `Flows.add`. Answers the tree as
 * written: 201, or 200 when every job of it existed (the same tree again). Each queue the flow
 * wrote claimable jobs to is told to the after-enqueue hook, so the Worker drains it as after an
 * enqueue; a waiting parent is released later, by the runtime that finishes its last child.
 *
 * @example
 * registerFlowRoutes(app, { flowsOf, bodyLimit, afterEnqueue: (c, queue, at) => options.afterEnqueue?.(c, queue, at) });
 */
export function registerFlowRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: FlowWiring<E>): void {
  app.on('POST', flowsRoute.getRoutingPath(), wiring.bodyLimit);
  app.openapi(
    flowsRoute,
    async (c) => {
      const sent = c.req.valid('json');
      // a W3C traceparent continues the caller's trace, as on the enqueue routes
      const traceparent = c.req.header('traceparent');
      const written = await wiring.flowsOf(c, queuesOf(sent)).add(toFlowJob(sent), traceparent === undefined ? {} : { traceparent });
      for (const [queue, dueAt] of dueTimes(sent, written, Date.now())) wiring.afterEnqueue(c, queue, dueAt);
      if (allDuplicates(written)) return c.json(written, 200);
      return c.json(written, 201);
    },
    (result: Validated, c: Context<E>) => {
      if (result.success) return undefined;
      const issue = result.error?.issues[0];
      const where = `${result.target === 'json' ? 'body' : result.target}${issue && issue.path.length > 0 ? ` ${flowPath(issue.path)}` : ''}`;
      return problem(c, 'EMQARG', `${where}: ${issue?.message ?? 'is invalid'}`);
    },
  );
}
