import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import type { FlowJob, FlowNode, Flows } from '../flows.js';
import { flowsRoute } from './flow-routes.js';
import type { FlowJobBody } from './flow-schemas.js';
import { problem } from './problem.js';

/** What the flows route needs of the app that serves it (`E`: its hono environment). */
export interface FlowWiring<E extends Env> {
  /** The Flows of a request, for a tree over `queues` (the app's cache of one Flows per transport). */
  readonly flowsOf: (c: Context<E>, queues: ReadonlySet<string>) => Flows;
  /** The body limit of the route (the bulk route's: a flow holds up to 1000 payloads). */
  readonly bodyLimit: MiddlewareHandler<E>;
  /** Told, per queue, when the earliest job the flow wrote there may run (the app's after-enqueue hook). */
  readonly afterEnqueue: (c: Context<E>, queue: string, dueAt: number) => void;
}

/** What a validator tells a hook (typed loosely, as rate-api.ts's: the route's input type stays its own). */
interface Validated {
  readonly target: string;
  readonly success: boolean;
  readonly error?: { readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> };
}

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
 * Serves `POST /v1/flows` (flow-routes.ts) on `app`: the tree checked by its schema (a 400 naming
 * the path as `Flows.add` names it, nothing written), then one `Flows.add`. Answers the tree as
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
