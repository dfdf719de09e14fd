import { keyspace } from '../keyspace.js';
import { flowAckOp } from '../ops/flow-ack.js';
import { flowApplyOp } from '../ops/flow-apply.js';
import { cancelOp } from '../ops/cancel.js';
import { removeOp } from '../ops/remove.js';
import { bind, type BoundOp, runOps } from '../ops/scripts.js';
import type { Transport } from '../transport.js';

/** How deep a removal may cascade through parents' children (a flow is at most 32 levels). */
const MAX_CASCADE = 64;

/**
 * Relays flow news (docs/design.md, "Flows"): the outbox entries a script of `queue` wrote (or a
 * beat of it found left over) go to the slots they are for, then are acknowledged in `queue`'s
 * outbox. A child's outcome goes to its parent's queue (flow-apply, one call per parent queue);
 * a removed parent's unfinished child is removed in its own queue (remove, fenced on the parent),
 * a cancelled parent's is cancelled there (cancel, fenced on the parent, with the reason
 * `parent <queue>|<id> was cancelled`), and what those write is relayed in turn, as is what the
 * parents' queues wrote applying the news (a parent its child failed tells its own parent). Every step is harmless twice: a relay cut off
 * anywhere leaves the entries in the outbox, and a later beat of `queue` relays them again.
 * `onRequest` counts the round trips. Throws what the transport throws (the entries stay).
 * Answers the queues in which it released parents (their doorbells rung), for a runtime that
 * cannot hear a doorbell (the Worker) to drain them.
 *
 * @example
 * const released = await relayFlowNews(transport, 'render', outbox); // ['pdf']
 */
export async function relayFlowNews(transport: Transport, queue: string, entries: readonly string[], onRequest?: () => void, depth = 0): Promise<string[]> {
  if (entries.length === 0) return [];
  const released = new Set<string>();
  const applies = new Map<string, string[]>();
  const removals: Array<{ queue: string; id: string; parent: string; cancel: boolean }> = [];
  for (const entry of entries) {
    const parts = entry.split('|', 5);
    if (parts[0] === 'u') {
      const parentQueue = parts[3]!;
      const list = applies.get(parentQueue);
      if (list) list.push(entry);
      else applies.set(parentQueue, [entry]);
    } else if (parts[0] === 'r' || parts[0] === 'k') {
      removals.push({ queue: parts[3]!, id: parts[4]!, parent: `${parts[1]!}|${parts[2]!}`, cancel: parts[0] === 'k' });
    }
  }
  const ops: Array<BoundOp<unknown>> = [];
  for (const [parentQueue, list] of applies) ops.push(bind(flowApplyOp(list), keyspace(parentQueue)));
  const removeOps = removals.map((r) =>
    r.cancel ? bind(cancelOp([r.id], `parent ${r.parent} was cancelled`, r.parent), keyspace(r.queue)) : bind(removeOp(r.id, r.parent), keyspace(r.queue)),
  );
  if (ops.length + removeOps.length > 0) {
    const replies = await runOps(transport, [...ops, ...removeOps], onRequest);
    [...applies.keys()].forEach((parentQueue, i) => {
      if ((replies[i] as { released: number }).released > 0) released.add(parentQueue);
    });
    // a removed (or cancelled) child that was a parent has its own children to remove (or
    // cancel), and a parent its child failed has its own parent to tell: their queues' outboxes say so
    if (depth < MAX_CASCADE) {
      const further = new Map<string, string[]>();
      [...applies.keys()].forEach((parentQueue, i) => {
        const { outbox } = replies[i] as { outbox: readonly string[] };
        if (outbox.length > 0) further.set(parentQueue, [...(further.get(parentQueue) ?? []), ...outbox]);
      });
      removals.forEach((r, i) => {
        const { outbox } = replies[ops.length + i] as { outbox: readonly string[] };
        if (outbox.length > 0) further.set(r.queue, [...(further.get(r.queue) ?? []), ...outbox]);
      });
      for (const [childQueue, news] of further) {
        for (const q of await relayFlowNews(transport, childQueue, news, onRequest, depth + 1)) released.add(q);
      }
    }
  }
  await runOps(transport, [bind(flowAckOp(entries), keyspace(queue))], onRequest);
  return [...released];
}

/**
 * relayFlowNews, never failing: what a failed relay leaves in the outbox, a later beat of `queue`
 * relays. `onRelease` is told the queues in which it released parents, if any.
 */
export async function relayOrLeave(
  transport: Transport,
  queue: string,
  entries: readonly string[],
  onRequest?: () => void,
  onRelease?: (queues: readonly string[]) => void,
): Promise<void> {
  if (entries.length === 0) return;
  try {
    const released = await relayFlowNews(transport, queue, entries, onRequest);
    if (released.length > 0) onRelease?.(released);
  } catch {
    // left in the outbox: a later beat of this queue finds it (older than 5 s) and relays it
  }
}
