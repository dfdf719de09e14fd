/**
 * The keyspace checker's pass across queues for flows (docs/design.md, "Flows"): a parent and its
 * children live in different queues, so in different slots, and no single queue's snapshot can
 * see both ends of a link. Given the queues of some flows, it checks that no parent waits on a
 * child that no longer exists: every child a waiting parent has not heard from is in its queue,
 * unfinished and still that parent's, or has finished with its news still in its queue's outbox;
 * every child it waits for dead (`onFailure: 'wait'`) is in its queue, dead and still its;
 * and every unfinished child of a waiting parent is among that parent's children.
 *
 * @example
 * expect(await checkFlowLinks(redis.raw, [pdf.name, render.name])).toEqual([]);
 */
import type { Redis } from 'ioredis';
import { findViolations, type QueueSnapshot, snapshotQueue } from './invariants.js';

const FINISHED = new Set(['completed', 'dead']);

export async function checkFlowLinks(raw: Redis, queues: readonly string[]): Promise<string[]> {
  const snaps = new Map<string, QueueSnapshot>();
  const snap = async (queue: string): Promise<QueueSnapshot> => {
    let s = snaps.get(queue);
    if (!s) {
      s = await snapshotQueue(raw, queue);
      snaps.set(queue, s);
    }
    return s;
  };
  for (const q of queues) await snap(q);
  const out: string[] = [];
  // news not yet applied, by child: `<child queue>|<child id>` -> the parents it is for
  const news = new Map<string, Set<string>>();
  const heard = async (childQueue: string, childId: string, parent: string): Promise<boolean> => {
    if (!news.has(childQueue)) {
      news.set(childQueue, new Set());
      for (const entry of (await snap(childQueue)).outbox.keys()) {
        const [kind, cq, cid, pq, pid] = entry.split('|');
        if (kind === 'u') news.get(childQueue)!.add(`${cq}|${cid}|${pq}|${pid}`);
      }
    }
    return news.get(childQueue)!.has(`${childQueue}|${childId}|${parent}`);
  };
  for (const q of queues) {
    const s = snaps.get(q)!;
    out.push(...findViolations(s).map((v) => `${q}: ${v}`));
    for (const [pid, row] of s.rows) {
      if (row.s !== 'waiting') continue;
      for (const [field, record] of Object.entries(s.kids.get(pid)?.fields ?? {})) {
        const kind = /^\d+\|([wpk])\|/.exec(record)?.[1];
        if (kind === undefined) continue;
        const bar = field.indexOf('|');
        const cq = field.slice(0, bar);
        const cid = field.slice(bar + 1);
        const child = (await snap(cq)).rows.get(cid);
        const ours = child?.fp?.startsWith(`${q}|${pid}|`) ?? false;
        // one unfinished, or dead and waited for (`onFailure: 'wait'`, k) until it is reprocessed
        if (child && ours && (kind === 'k' ? child.s === 'dead' : !FINISHED.has(child.s ?? ''))) continue;
        if (await heard(cq, cid, `${q}|${pid}`)) continue;
        out.push(
          `${q}: ${pid} waits on ${cid} of ${cq}, which ${!child ? 'no longer exists' : !ours ? 'is not its child' : `is ${child.s ?? '?'}`} with no news in its outbox`,
        );
      }
    }
  }
  for (const q of queues) {
    for (const [cid, row] of snaps.get(q)!.rows) {
      if (!row.fp || FINISHED.has(row.s ?? '')) continue;
      const [pq, pid, policy] = row.fp.split('|');
      if (!pq || !pid) continue;
      const parent = (await snap(pq)).rows.get(pid);
      if (parent?.s !== 'waiting') continue;
      const field = (await snap(pq)).kids.get(pid)?.fields[`${q}|${cid}`];
      if (field === undefined && policy !== 'r') out.push(`${q}: ${cid} is unfinished but its waiting parent ${pid} of ${pq} does not count it`);
    }
  }
  return out;
}
