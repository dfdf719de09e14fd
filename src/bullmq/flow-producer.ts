/**
 * BullMQ's FlowProducer on echomq's Flows: a tree of jobs over any queues written in one round
 * trip, each parent `waiting-children` until its children finish (docs/design/bullmq-layer.md,
 * "Flows").
 */
import { EventEmitter } from 'node:events';
import { type FlowJob as EmqFlowJob, type FlowNode, Flows } from '../flows/flows.js';
import type { OnFailure } from '../flows/flow.js';
import type { IoredisTransport } from '../node/ioredis-transport.js';
import { Queue as EmqQueue } from '../queue/queue.js';
import { DEFAULT_PREFIX, emqQueueName, type QueueBaseOptions, transportFor } from './connection.js';
import { bullId, type Envelope } from './envelope.js';
import { UnsupportedBullMQError } from './errors.js';
import { Job } from './job.js';
import type { JobQueue } from './job-types.js';
import { checkSize, enqueueOptionsOf, type JobsOptions } from './options.js';

/** BullMQ's flow node: a job in `queueName` and the jobs it waits for. */
export interface FlowJob {
  /** The job's name. */
  readonly name: string;
  /** Its queue's BullMQ name. */
  readonly queueName: string;
  /** Its data. */
  readonly data?: unknown;
  /** Its queue's prefix (default the FlowProducer's). */
  readonly prefix?: string;
  /** Its options (`deduplication` and `repeat` not on flow jobs). */
  readonly opts?: Omit<JobsOptions, 'parent'>;
  /** The jobs it waits for. */
  readonly children?: readonly FlowJob[];
}

/** BullMQ's answer to a flow add: each node's Job and its children's. */
export interface JobNode {
  /** The node's job. */
  readonly job: Job;
  /** Its children's nodes, when it has children. */
  readonly children?: JobNode[];
}

/** BullMQ's FlowProducer options. */
export type FlowProducerOptions = QueueBaseOptions;

/**
 * A BullMQ FlowProducer: `add` writes a parent with its children (in any queues) at once; the
 * parent runs when they have all completed, and `job.getChildrenValues()` reads their results.
 *
 * @example
 * import { FlowProducer } from 'echomq/bullmq';
 *
 * const flows = new FlowProducer({ connection });
 * const { job } = await flows.add({ name: 'report', queueName: 'pdf', children: [{ name: 'page', queueName: 'render', data: { page: 1 } }] });
 */
export class FlowProducer extends EventEmitter {
  /** The options it was made with. */
  readonly opts: FlowProducerOptions;
  private readonly transport: IoredisTransport;
  private readonly flows: Flows;
  private readonly queues = new Map<string, JobQueue>();
  private closing: Promise<void> | undefined;

  constructor(opts: FlowProducerOptions = {}) {
    super();
    this.opts = opts;
    this.transport = transportFor(opts.connection);
    this.flows = new Flows(this.transport);
  }

  /** Resolves once Redis answers. */
  async waitUntilReady(): Promise<void> {
    await this.transport.ping();
  }

  /**
   * Writes a flow: every child before its parent, in one round trip; a bad node throws and writes
   * nothing. A child that fails for good leaves its parent waiting (`waiting-children`) until the
   * child is retried, as in BullMQ, unless it says `failParentOnFailure`,
   * `ignoreDependencyOnFailure` or `removeDependencyOnFailure` (docs/guides/bullmq.md, "Differences").
   *
   * @example
   * await flows.add({ name: 'sum', queueName: 'math', children: [{ name: 'n', queueName: 'math', data: 1 }] });
   */
  async add(flow: FlowJob, opts?: FlowOpts): Promise<JobNode> {
    const withDefaults = withQueueDefaults(flow, opts?.queuesOptions ?? {});
    const written = await this.flows.add(this.emqFlow(withDefaults, true));
    return this.nodeOf(withDefaults, written);
  }

  /** Writes several flows, one after another. */
  async addBulk(flows: readonly FlowJob[]): Promise<JobNode[]> {
    const out: JobNode[] = [];
    for (const flow of flows) out.push(await this.add(flow));
    return out;
  }

  /** Throws UnsupportedBullMQError. */
  async getFlow(_opts: { queueName: string; id: string }): Promise<JobNode> {
    throw new UnsupportedBullMQError('FlowProducer.getFlow', 'read the parent with queue.getJob and its children with job.getChildrenValues');
  }

  /** Closes its connection. */
  async close(): Promise<void> {
    this.closing ??= this.transport.close();
    await this.closing;
  }

  /** close(). */
  async disconnect(): Promise<void> {
    await this.close();
  }

  private emqFlow(flow: FlowJob, root: boolean): EmqFlowJob<Envelope> {
    const opts = flow.opts ?? {};
    if (opts.deduplication ?? opts.debounce) throw new UnsupportedBullMQError('deduplication on a flow job', 'give the root a jobId: a flow added again with the same root id is all duplicates');
    checkSize(flow.name, flow.data, opts);
    const { dedupe: _none, ...enqueue } = enqueueOptionsOf(opts);
    const onFailure = onFailureOf(opts);
    return {
      queue: emqQueueName(flow.queueName, flow.prefix ?? this.opts.prefix),
      payload: { name: flow.name, data: flow.data ?? {}, opts },
      ...enqueue,
      ...(root ? {} : { onFailure }),
      ...(flow.children && flow.children.length > 0 ? { children: flow.children.map((c) => this.emqFlow(c, false)) } : {}),
    };
  }

  private nodeOf(flow: FlowJob, written: FlowNode, parent?: FlowNode): JobNode {
    const job = new Job(this.queueOf(flow), flow.name, flow.data ?? {}, flow.opts ?? {}, bullId(written.id));
    if (parent) job.setParent(parent.queue, parent.id);
    const children = (flow.children ?? []).map((c, i) => this.nodeOf(c, written.children[i]!, written));
    return children.length > 0 ? { job, children } : { job };
  }

  private queueOf(flow: FlowJob): JobQueue {
    const prefix = flow.prefix ?? this.opts.prefix ?? DEFAULT_PREFIX;
    const key = `${prefix}:${flow.queueName}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { name: flow.queueName, qualifiedName: key, emq: new EmqQueue<Envelope>(this.transport, emqQueueName(flow.queueName, prefix)) };
      this.queues.set(key, queue);
    }
    return queue;
  }
}

/** BullMQ's FlowProducer.add options: per queue name, the options its jobs take unless they give their own. */
export interface FlowOpts {
  /** Per queue name, the options its jobs take by default. */
  readonly queuesOptions?: Readonly<Record<string, FlowQueueOpts>>;
}

/** One queue's defaults in a flow (FlowOpts). */
export interface FlowQueueOpts {
  /** Options under each of the queue's nodes' own `opts`. */
  readonly defaultJobOptions?: JobsOptions;
}

/** `flow` with each node's `opts` over its queue's `defaultJobOptions` (FlowOpts). */
function withQueueDefaults(flow: FlowJob, queues: NonNullable<FlowOpts['queuesOptions']>): FlowJob {
  const defaults = queues[flow.queueName]?.defaultJobOptions;
  return {
    ...flow,
    ...(defaults ? { opts: { ...defaults, ...flow.opts } } : {}),
    ...(flow.children ? { children: flow.children.map((c) => withQueueDefaults(c, queues)) } : {}),
  };
}

/** echomq's onFailure for BullMQ's per-child flags; none: BullMQ's default, the parent waits (`wait`). */
function onFailureOf(opts: JobsOptions): OnFailure {
  if (opts.removeDependencyOnFailure) return 'remove';
  if (opts.ignoreDependencyOnFailure) return 'ignore';
  if (opts.failParentOnFailure) return 'fail-parent';
  return 'wait';
}
