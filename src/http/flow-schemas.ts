import { z } from '@hono/zod-openapi';
import { MAX_PRIORITY } from '../encode.js';
import type { OnFailure } from '../flows/flow.js';
import { type FlowNode, MAX_FLOW_CHILDREN } from '../flows/flows.js';
import { backoffOptions, jobId, name } from './schemas.js';

/**
 * The shapes of flows over HTTP (`POST /v1/flows`; src/flows/flow.ts, docs/design.md "Flows"): the tree
 * a request sends (a `FlowJob` as JSON) and the tree it answers (a `FlowNode`). Both recursive,
 * each one named schema in the OpenAPI document. A file of their own: the flows route alone uses them.
 */

/** The most levels a flow sent over HTTP may have (a root alone is 1); `Flows.add` takes 32. */
export const MAX_HTTP_FLOW_DEPTH = 8;
/** The most jobs a flow sent over HTTP may hold; `Flows.add` takes 10,000. */
export const MAX_HTTP_FLOW_JOBS = 1000;

/** A node of a flow as a request sends it: a `FlowJob` as JSON, `runAt` also as ISO 8601 text. */
export interface FlowJobBody {
  readonly queue: string;
  readonly payload?: unknown;
  readonly id?: string | undefined;
  readonly group?: string | undefined;
  readonly delayMs?: number | undefined;
  readonly runAt?: number | string | undefined;
  readonly priority?: number | undefined;
  readonly maxAttempts?: number | undefined;
  readonly backoff?: number | z.infer<typeof backoffOptions> | undefined;
  readonly onFailure?: OnFailure | undefined;
  readonly children?: readonly FlowJobBody[] | undefined;
}

const PARENT_NOW = 'a parent runs when its children have finished: it takes no delayMs or runAt';

/** One node and, through `children`, the nodes below it: strict, as the enqueue bodies are. */
const flowJob: z.ZodType<FlowJobBody> = z
  .lazy(() =>
    z
      .object({
        queue: name,
        payload: z.unknown().refine((v) => v !== undefined, 'payload is required'),
        id: jobId.optional().openapi({ description: 'absent: `<parent id>.<index>` (the root: a random `JOB:<hex>`), so the same root id again is duplicates' }),
        group: name.optional(),
        delayMs: z.number().int().min(0).optional().openapi({ description: 'a leaf only: a parent runs when its children have finished' }),
        runAt: z.union([z.number().int().min(0), z.iso.datetime({ offset: true })]).optional().openapi({ description: 'a leaf only, epoch ms or ISO 8601' }),
        priority: z.number().int().min(0).max(MAX_PRIORITY).optional(),
        maxAttempts: z.number().int().min(1).max(1_000_000).optional(),
        backoff: z.union([z.number().int().min(0), backoffOptions]).optional(),
        onFailure: z
          .enum(['fail-parent', 'ignore', 'remove', 'wait'])
          .optional()
          .openapi({ description: 'what the parent makes of this job if it dies (default fail-parent: the parent dies too; ignore: it runs; remove: it stops waiting for it; wait: it waits until this job is reprocessed and finishes); not on the root' }),
        children: z
          .array(flowJob)
          .max(MAX_FLOW_CHILDREN)
          .optional()
          .openapi({ description: `the jobs this one waits for, in any queues; with any, it is written \`waiting\` (at most ${MAX_HTTP_FLOW_DEPTH} levels and ${MAX_HTTP_FLOW_JOBS} jobs in all)` }),
      })
      .strict()
      .refine((b) => !(b.delayMs !== undefined && b.runAt !== undefined), 'give delayMs or runAt, not both')
      .refine((b) => !(b.children?.length && b.delayMs !== undefined), { path: ['delayMs'], message: PARENT_NOW })
      .refine((b) => !(b.children?.length && b.runAt !== undefined), { path: ['runAt'], message: PARENT_NOW }),
  )
  .openapi('FlowJob');

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A node met walking a tree: where it hangs, for a path named in a refusal. */
interface Walked {
  readonly node: unknown;
  readonly parent: Walked | undefined;
  readonly index: number;
}

const pathOf = (at: Walked): Array<string | number> => {
  const path: Array<string | number> = [];
  for (let w: Walked | undefined = at; w?.parent; w = w.parent) path.unshift('children', w.index);
  return path;
};

/**
 * The tree's size, checked level by level before the schema reads it: the schema descends one
 * call per level, so a body of 150,000 nested children (6 MiB) would overflow the stack, a 500
 * where a 400 is due. Also the root's own rule, which no node's schema can tell: it has no parent,
 * so no onFailure. What is not a node (not an object, children not an array) is left to the schema.
 */
function checkTree(root: unknown, ctx: z.RefinementCtx): void {
  if (isObject(root) && root.onFailure !== undefined) ctx.addIssue({ code: 'custom', path: ['onFailure'], message: "onFailure is a child's: the root has no parent" });
  let level: Walked[] = [{ node: root, parent: undefined, index: 0 }];
  let jobs = 0;
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > MAX_HTTP_FLOW_DEPTH) {
      ctx.addIssue({ code: 'custom', path: pathOf(level[0]!), message: `a flow is at most ${MAX_HTTP_FLOW_DEPTH} levels deep over HTTP` });
      return;
    }
    jobs += level.length;
    const next: Walked[] = [];
    for (const at of level) {
      const children = isObject(at.node) ? at.node.children : undefined;
      if (Array.isArray(children)) children.forEach((node: unknown, index) => next.push({ node, parent: at, index }));
    }
    level = next;
  }
  if (jobs > MAX_HTTP_FLOW_JOBS) ctx.addIssue({ code: 'custom', path: [], message: `a flow holds at most ${MAX_HTTP_FLOW_JOBS} jobs over HTTP, got ${jobs}` });
}

/** `POST /v1/flows`: the root of the tree, its size and the root's rule checked first (checkTree). */
export const flowBody = z.preprocess((value, ctx) => {
  checkTree(value, ctx);
  return value;
}, flowJob);

const flowStates = z.enum(['waiting', 'pending', 'scheduled', 'dead', 'duplicate']);

/** A node of a flow as written: its queue, id and state, and its children's. */
export const flowNode: z.ZodType<FlowNode> = z
  .lazy(() =>
    z.object({
      queue: z.string(),
      id: z.string().openapi({ description: 'the id every other route takes: `JOB:` and the id given or derived' }),
      state: flowStates.openapi({
        description:
          '`waiting`: a parent, until its children have finished; `pending` or `scheduled`: claimable now or later; `dead`: a parent a child already failed; `duplicate`: a job with this id exists, nothing was written for it',
      }),
      children: z.array(flowNode).readonly(),
    }),
  )
  .openapi('FlowNode');
