import { DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES, encodeJob, withLinks } from '../encode.js';
import { POLICY_CODE } from '../flows/flow.js';
import type { Job } from '../job.js';
import { keyspace } from '../keyspace.js';
import { enqueueOp } from '../ops/enqueue.js';
import { registerQueueOp } from '../ops/register-queue.js';
import { bind, runOps, type Scripts } from '../ops/scripts.js';
import { type StepItem, stepOp } from '../ops/step.js';
import type { QueuePartition } from '../queue/surface.js';
import type { InvokeChild, StepHost, StepWrite } from '../steps/job-steps.js';
import type { Transport } from '../transport.js';

interface Pending {
  readonly item: StepItem;
  resolve(written: boolean): void;
  reject(error: unknown): void;
}

/**
 * A queue's StepHost (`Leases.steps`): step records fenced by their jobs' leases (lua/step.lua).
 * Writes wait for one another: the first goes at once, and those asked for while it is in flight
 * go together in the next call, so jobs running at once pay a round trip between them, not one
 * each, as their settles do.
 */
export class LeaseSteps implements StepHost {
  readonly queue: string;
  readonly maxResultBytes: number;
  private readonly transport: Transport;
  private queued: Pending[] = [];
  private sending = false;
  private readonly registered = new Set<string>();

  constructor(
    private readonly scripts: Scripts,
    queue: QueuePartition,
    private readonly onRequest: () => void,
  ) {
    this.queue = queue.name;
    this.maxResultBytes = queue.maxResultBytes;
    this.transport = queue.transport;
  }

  write(job: Pick<Job, 'id' | 'token'>, write: StepWrite): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queued.push({ item: { id: job.id, token: job.token, ...write }, resolve, reject });
      if (!this.sending) {
        this.sending = true;
        // a microtask later: the writes of handlers resumed in the same turn go together
        queueMicrotask(() => void this.send());
      }
    });
  }

  /**
   * Enqueues an invoke's child in its queue, its row linked to the parent (`fp`, policy ignore:
   * the parent's step sees a death as an InvokedJobError), after the queue's name is registered.
   * A child enqueued before (the same id) is a duplicate: nothing written.
   */
  async invoke(parent: { readonly queue: string; readonly id: string }, child: InvokeChild): Promise<void> {
    const { queue, payload, id, group, priority, maxAttempts } = child;
    const encoded = encodeJob(payload, { id, group, priority, maxAttempts }, DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES);
    const linked = withLinks(encoded, `${parent.queue}|${parent.id}|${POLICY_CODE.ignore}`, '');
    if (!this.registered.has(queue)) {
      await runOps(this.transport, [bind(registerQueueOp({ queue, partitions: 0 }))], this.onRequest);
      if (this.registered.size < 1000) this.registered.add(queue);
    }
    await runOps(this.transport, [bind(enqueueOp([linked]), keyspace(queue))], this.onRequest);
  }

  private async send(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued;
      this.queued = [];
      try {
        const written = await this.scripts.run(stepOp(batch.map((p) => p.item)));
        batch.forEach((p, i) => p.resolve(written[i] ?? false));
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.sending = false;
  }
}
