import { DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES, type EncodedJob, encodeJob, type JobDefaults, toJobId, withLinks } from '../encode.js';
import { InvalidArgumentError, shown } from '../errors.js';
import { type OnFailure, POLICY_CODE } from './flow.js';
import type { EnqueueOptions, EnqueueResult } from '../job.js';
import { assertName, keyspace } from '../keyspace.js';
import { randomHex } from '../random-hex.js';
import { enqueueOp } from '../ops/enqueue.js';
import { registerQueueOp } from '../ops/register-queue.js';
import { bind, type BoundOp, runOps } from '../ops/scripts.js';
import { traceSend } from '../telemetry/telemetry.js';
import type { Replication, Transport } from '../transport.js';
import { type DurabilityOptions, replicationOf } from '../durability.js';

/** The most jobs one flow may hold. */
export const MAX_FLOW_JOBS = 10_000;
/** The most levels one flow may have (a root alone is 1). */
export const MAX_FLOW_DEPTH = 32;
/** The most children one parent may wait for. */
export const MAX_FLOW_CHILDREN = 1_000;
/** Jobs per enqueue call, as Queue.addBulk sends them. */
const CHUNK = 1000;
const FLOW_FIELDS: ReadonlySet<string> = new Set([
  'queue',
  'payload',
  'id',
  'group',
  'delayMs',
  'runAt',
  'priority',
  'maxAttempts',
  'backoff',
  'timeoutMs',
  'expireAfterMs',
  'expireAt',
  'keys',
  'onFailure',
  'children',
]);

/**
 * One node of a flow (`Flows.add`): a job in `queue` with its options, and the jobs it waits for.
 * A node with `children` is a parent: written in state `waiting`, it becomes pending when its last
 * child has finished. Ids as for `Queue.add`; a node without one gets `<parent's id>.<index>`
 * (the root: a random flow id), so a tree added twice with the same root id is duplicates, not
 * a second tree.
 *
 * @example
 * const tree: FlowJob = {
 *   queue: 'pdf', id: 'report-7', payload: { report: 7 },
 *   children: [1, 2, 3].map((page) => ({ queue: 'render', payload: { report: 7, page } })),
 * };
 */
export interface FlowJob<Payload = unknown> extends Omit<EnqueueOptions, 'dedupe'> {
  /** The queue the job goes to. */
  readonly queue: string;
  /** What the job carries (JSON). */
  readonly payload: Payload;
  /** What the parent makes of this job if it dies (default `fail-parent`); not on the root. */
  readonly onFailure?: OnFailure;
  /** The jobs this one waits for, in any queues (its own included). */
  readonly children?: ReadonlyArray<FlowJob>;
}

/** A node of a flow as written (`Flows.add`): its queue, id, where it went, and its children's. */
export interface FlowNode {
  /** The queue it went to. */
  readonly queue: string;
  /** `JOB:` and its id. */
  readonly id: string;
  /**
   * `waiting` for a parent whose children are not all finished, `pending` or `scheduled` for a
   * job claimable now or later, `dead` for a parent a child already failed, `duplicate` when a
   * job with that id exists (nothing written for it).
   */
  readonly state: 'waiting' | 'pending' | 'scheduled' | 'dead' | 'duplicate';
  /** Its children as written, in the tree's order. */
  readonly children: readonly FlowNode[];
}

/**
 * Options of Flows: what a Queue takes for the jobs it writes, durability included (a flow's
 * round trip waits for a replica of each master it wrote on, with `'replicated'`; sent again
 * after a ReplicationError, a tree with a root id is all duplicates).
 */
export interface FlowsOptions extends DurabilityOptions {
  /** The largest payload accepted, in UTF-8 bytes of JSON (default 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Defaults for jobs that do not say: max attempts (3) and backoff (exponential from 1 s). */
  readonly defaults?: Partial<JobDefaults>;
}

/** A node of the tree being written: its encoded job, where it sits, its children. */
interface Planned {
  readonly queue: string;
  readonly id: string;
  /** Its distance to its deepest leaf: 0 for a leaf. Nodes are written in this order. */
  height: number;
  encoded: EncodedJob;
  readonly children: Planned[];
  state?: FlowNode['state'];
}

/**
 * Writes flows: trees of jobs over any queues, where a parent waits (state `waiting`) until
 * every child has finished, then runs with its children's results (`Job.children`). Works over
 * any Transport, so the same code runs on Node and in a Worker (docs/design.md, "Flows").
 *
 * @example
 * const flows = new Flows(transport);
 * const pdf = await flows.add({
 *   queue: 'pdf', id: 'report-7', payload: { report: 7 },
 *   children: [1, 2, 3].map((page) => ({ queue: 'render', payload: { report: 7, page } })),
 * });
 * // pdf.state === 'waiting'; pdf.children[0].id === 'JOB:report-7.0'
 */
export class Flows {
  private readonly defaults: JobDefaults;
  private readonly maxPayloadBytes: number;
  private readonly replication: Replication | undefined;
  /** Queues this object has recorded in the registry already. */
  private readonly registered = new Set<string>();

  constructor(
    /** The transport the flows are written through. */
    readonly transport: Transport,
    options: FlowsOptions = {},
  ) {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options must be an object');
    this.defaults = { ...DEFAULT_JOB_DEFAULTS, ...options.defaults };
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    if (!Number.isSafeInteger(this.maxPayloadBytes) || this.maxPayloadBytes < 1) {
      throw new InvalidArgumentError(`maxPayloadBytes must be a positive integer, got ${shown(this.maxPayloadBytes)}`);
    }
    this.replication = replicationOf(options);
  }

  /**
   * Writes a flow in one round trip: every child before its parent, so a tree cut off midway
   * leaves no parent waiting on a child that was never written, and a tree sent again is
   * duplicates. The leaves are claimable at once (or at their delay); each parent is `waiting`.
   * A bad node throws a typed error naming its path (`children[2].payload: ...`) and nothing is
   * written. Answers the tree as written: each node's queue, id and state. The write is traced as
   * one send (README, "Telemetry"): under the active span, or continuing `options.traceparent`, and
   * every row keeps the send's traceparent, as Queue.add's do.
   */
  async add(flow: FlowJob, options: { readonly traceparent?: string } = {}): Promise<FlowNode> {
    const nodes: Planned[] = [];
    // the root's id when it has none: a random flow id (made only then)
    const rootId = typeof flow === 'object' && flow !== null && flow.id !== undefined ? '' : `JOB:${randomHex()}`;
    const root = this.plan(flow, undefined, '', 1, nodes, rootId);
    if (nodes.length > MAX_FLOW_JOBS) throw new InvalidArgumentError(`a flow holds at most ${MAX_FLOW_JOBS} jobs, got ${nodes.length}`);
    const seen = new Set<string>();
    for (const node of nodes) {
      const key = `${node.queue}|${node.id}`;
      if (seen.has(key)) throw new InvalidArgumentError(`the job ${node.id} of queue ${node.queue} appears twice in the flow`);
      seen.add(key);
    }
    await traceSend(root.queue, nodes.length, options.traceparent, async (traceparent) => {
      await this.write(nodes, traceparent);
      return nodes.map((n) => ({ id: n.id, state: n.state ?? 'duplicate' }));
    });
    return shape(root);
  }

  /** Validates `job` (at `path`) and its subtree, collecting every node into `nodes`. */
  private plan(job: FlowJob, parent: { queue: string; id: string } | undefined, path: string, depth: number, nodes: Planned[], fallbackId: string): Planned {
    const at = (message: string): string => (path === '' ? message : `${path}: ${message}`);
    try {
      if (typeof job !== 'object' || job === null || Array.isArray(job)) throw new InvalidArgumentError(`a flow job is an object {queue, payload, ...}, got ${shown(job)}`);
      for (const field of Object.keys(job)) {
        if (!FLOW_FIELDS.has(field)) throw new InvalidArgumentError(`unknown field ${shown(field)} of a flow job`);
      }
      assertName('queue', job.queue);
      if (depth > MAX_FLOW_DEPTH) throw new InvalidArgumentError(`a flow is at most ${MAX_FLOW_DEPTH} levels deep`);
      const children = job.children ?? [];
      if (!Array.isArray(children)) throw new InvalidArgumentError(`children must be an array, got ${shown(children)}`);
      if (children.length > MAX_FLOW_CHILDREN) throw new InvalidArgumentError(`a parent waits for at most ${MAX_FLOW_CHILDREN} children, got ${children.length}`);
      if (job.onFailure !== undefined && !(job.onFailure in POLICY_CODE)) {
        throw new InvalidArgumentError(`onFailure must be 'fail-parent', 'ignore', 'remove' or 'wait', got ${shown(job.onFailure)}`);
      }
      if (parent === undefined && job.onFailure !== undefined) throw new InvalidArgumentError('onFailure is a child\'s: the root has no parent');
      if (children.length > 0 && (job.delayMs !== undefined || job.runAt !== undefined)) {
        throw new InvalidArgumentError('a parent runs when its children have finished: it takes no delayMs or runAt');
      }
      const id = job.id === undefined ? toJobId(fallbackId) : toJobId(job.id);
      const { queue, payload, onFailure, children: _children, ...options } = job;
      const encoded = encodeJob(payload, { ...options, id }, this.defaults, this.maxPayloadBytes);
      const node: Planned = { queue, id, height: 0, encoded, children: [] };
      nodes.push(node);
      children.forEach((child, i) => {
        const planned = this.plan(child, { queue, id }, `${path === '' ? '' : `${path}.`}children[${i}]`, depth + 1, nodes, `${id}.${i}`);
        node.children.push(planned);
        node.height = Math.max(node.height, planned.height + 1);
      });
      const parentField = parent === undefined ? '' : `${parent.queue}|${parent.id}|${POLICY_CODE[onFailure ?? 'fail-parent']}`;
      const childrenField = node.children.map((c) => `${c.queue}|${c.id}`).join(',');
      node.encoded = withLinks(encoded, parentField, childrenField);
      return node;
    } catch (error) {
      if (error instanceof Error && !error.message.startsWith(path) ) error.message = at(error.message);
      throw error;
    }
  }

  /** Enqueues the nodes lowest first, one call per queue and height (1000 jobs each), in one round trip. */
  private async write(nodes: readonly Planned[], traceparent: string): Promise<void> {
    const batches = new Map<string, Planned[]>();
    const order = [...nodes].sort((a, b) => a.height - b.height);
    for (const node of order) {
      const key = `${node.height}\u0000${node.queue}`;
      const batch = batches.get(key);
      if (batch) batch.push(node);
      else batches.set(key, [node]);
    }
    const queues = new Set(nodes.map((n) => n.queue));
    // the names go into the registry in a round trip of their own before the first write: the
    // registry is another slot, so a write sent beside a refused registration (EMQPARTITION: a
    // partitioned queue's name, whose jobs live in its partitions) would run anyway
    const registrations = [...queues].filter((queue) => !this.registered.has(queue)).map((queue) => bind(registerQueueOp({ queue, partitions: 0 })));
    if (registrations.length > 0) await runOps(this.transport, registrations);
    const ops: Array<BoundOp<unknown>> = [];
    const writes: Planned[][] = [];
    for (const batch of batches.values()) {
      const keys = keyspace(batch[0]!.queue);
      for (let i = 0; i < batch.length; i += CHUNK) {
        const part = batch.slice(i, i + CHUNK);
        writes.push(part);
        ops.push(bind(enqueueOp(part.map((n) => n.encoded), { key: '', ttlMs: 0, callerKey: false, traceparent }), keys));
      }
    }
    const replies = (await runOps(this.transport, ops, undefined, this.replication)) as unknown[];
    // a bounded memory of names: past 1000 it starts again (a registration costs one SADD)
    if (this.registered.size > 1000) this.registered.clear();
    for (const queue of queues) this.registered.add(queue);
    writes.forEach((part, i) => {
      const results = replies[i] as EnqueueResult[];
      part.forEach((node, j) => (node.state = results[j]?.state as FlowNode['state']));
    });
  }
}

function shape(node: Planned): FlowNode {
  return { queue: node.queue, id: node.id, state: node.state ?? 'duplicate', children: node.children.map(shape) };
}
