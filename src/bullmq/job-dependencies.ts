/**
 * A BullMQ flow parent's children as BullMQ reads them (`getChildrenValues`, `getDependencies`),
 * from the echomq parent row's children, each keyed `<prefix>:<queue>:<id>` as BullMQ keys them.
 */
import type { JobRecord } from '../job.js';
import { bullQueueName } from './queue-names.js';
import { bullId, type Envelope, failedReasonOf } from './envelope.js';
import type { Dependencies, JobQueue } from './job-types.js';

/** A parent's row and how its children are keyed. */
export interface ChildrenView {
  readonly record: JobRecord<Envelope> | null;
  key(queue: string, id: string): string;
}

/** The row of echomq job `emqId` of `queue`, and how its children are keyed. */
export async function childrenOf(queue: JobQueue, emqId: string): Promise<ChildrenView> {
  const record = await queue.emq.getJob(emqId);
  const prefix = queue.qualifiedName.split(':')[0]!;
  return { record, key: (q, id) => `${prefix}:${bullQueueName(q, prefix)}:${bullId(id)}` };
}

/** The return values of the completed children. */
export function childrenValues<CT>({ record, key }: ChildrenView): Record<string, CT> {
  const out: Record<string, CT> = {};
  for (const child of record?.children ?? []) if (child.state === 'completed') out[key(child.queue, child.id)] = child.result as CT;
  return out;
}

/** The children by BullMQ's kinds: processed (their results), unprocessed, failed (they failed the parent), ignored. */
export function dependenciesOf({ record, key }: ChildrenView): Dependencies {
  const deps = { processed: {} as Record<string, unknown>, unprocessed: [] as string[], failed: [] as string[], ignored: {} as Record<string, string> };
  const parentFailed = record?.state === 'dead';
  for (const child of record?.children ?? []) {
    const k = key(child.queue, child.id);
    if (child.state === 'completed') deps.processed[k] = child.result ?? null;
    else if (child.state === 'unfinished') deps.unprocessed.push(k);
    else if (parentFailed) deps.failed.push(k);
    else deps.ignored[k] = failedReasonOf(child.error) ?? '';
  }
  return { ...deps, nextProcessedCursor: 0, nextUnprocessedCursor: 0, nextFailedCursor: 0, nextIgnoredCursor: 0 };
}

/** The errors of the children that failed the parent (none while it has not failed). */
export function failedChildrenValues({ record, key }: ChildrenView): Record<string, string> {
  const out: Record<string, string> = {};
  if (record?.state !== 'dead') return out;
  for (const c of record.children ?? []) if (c.state === 'failed') out[key(c.queue, c.id)] = failedReasonOf(c.error) ?? '';
  return out;
}
