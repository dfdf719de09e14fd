/**
 * A flow's tree as bull-board's flow view reads it (`adapter.getFlowProducer().getFlow(...)`), from
 * echomq's rows: each parent's children (`JobRecord.children`, in whatever queue each lives), level
 * by level (docs/guides/bull-board.md, "Flows"). Reads only: echomq's Flows write a tree whole.
 */
import type { QueueSurface } from '../queue/surface.js';
import { BoardJob } from './board-job.js';
import { jobIdOf } from './payload.js';

/** A node of the tree: a job and, down to the depth asked, its children. */
export interface FlowTreeNode {
  /** The job. */
  readonly job: BoardJob;
  /** Its children (absent below the depth asked). */
  readonly children?: FlowTreeNode[];
}

/** What bull-board asks of a flow (BullMQ's `FlowProducer.getFlow` options). */
export interface FlowQuery {
  /** The queue of the job (its echomq name). */
  readonly queueName: string;
  /** The job's id, as the board shows it. */
  readonly id: string;
  /** Levels to read, the job's own counted (default 10). */
  readonly depth?: number;
  /** The most children read per parent (default: all). */
  readonly maxChildren?: number;
}

/** How the tree reader reaches a queue by name. */
export type QueueByName = (name: string) => Promise<QueueSurface<unknown>>;

/**
 * Reads flow trees from echomq's rows: bull-board's flow producer for the adapter (only `getFlow`).
 *
 * @example
 * const tree = await new FlowReader(queueByName).getFlow({ queueName: 'render', id: '7', depth: 3 });
 */
export class FlowReader {
  constructor(private readonly queueByName: QueueByName) {}

  /** The tree under job `id` of `queueName`, or null when there is no such job. */
  async getFlow(query: FlowQuery): Promise<FlowTreeNode | null> {
    const queue = await this.queueByName(query.queueName);
    const record = await queue.getJob(jobIdOf(query.id));
    if (!record) return null;
    return this.nodeOf(new BoardJob({ emq: queue }, record), query.depth ?? 10, query.maxChildren);
  }

  private async nodeOf(job: BoardJob, depth: number, maxChildren: number | undefined): Promise<FlowTreeNode> {
    const kids = job.emqRecord.children;
    if (depth <= 1 || !kids || kids.length === 0) return { job };
    const children: FlowTreeNode[] = [];
    for (const child of maxChildren === undefined ? kids : kids.slice(0, maxChildren)) {
      const queue = await this.queueByName(child.queue);
      const record = await queue.getJob(child.id);
      // a child removed since (or a completed one expired) is left out: bull-board counts it as gone
      if (record) children.push(await this.nodeOf(new BoardJob({ emq: queue }, record), depth - 1, maxChildren));
    }
    return { job, children };
  }
}
