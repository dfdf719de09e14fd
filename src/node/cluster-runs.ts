import type { Cluster } from 'ioredis';
import { slotOf } from '../cluster-slot.js';

/** A run of calls one master serves: the master (`host:port`, undefined when none is known) and the calls' indices, in order. */
export interface Run {
  readonly master: string | undefined;
  readonly indices: readonly number[];
}

/**
 * The indices of `items` in `among` (all of them by default), cut into runs of consecutive items
 * whose first keys one master of `cluster` serves (by the client's map of slots), in order: what
 * one pipeline of a cluster client may carry. The script calls of the transport and the commands
 * of the REST bridge are cut here alike.
 *
 * A keyless item joins the run it comes in (a first run of keyless ones is joined by the first
 * keyed item). A key whose slot no master is known to serve goes alone, joined by nothing: ioredis
 * finds its node, and its neighbours' pipelines are not refused for it.
 *
 * @example
 * for (const run of runsByMaster(cluster, calls, (call) => call.keys[0])) await send(run.indices.map((i) => calls[i]!));
 */
export function runsByMaster<T>(
  cluster: Cluster,
  items: readonly T[],
  firstKey: (item: T) => string | undefined,
  among: readonly number[] = items.map((_, i) => i),
): Run[] {
  const runs: Run[] = [];
  let open: { master: string | undefined; indices: number[] } | undefined; // the run the next item may join
  for (const index of among) {
    const key = firstKey(items[index]!);
    const master = key === undefined ? undefined : cluster.slots[slotOf(key)]?.[0];
    if (open && (key === undefined || (master !== undefined && (open.master === undefined || open.master === master)))) {
      open.indices.push(index);
      open.master ??= master;
      continue;
    }
    const run = { master, indices: [index] };
    runs.push(run);
    open = key !== undefined && master === undefined ? undefined : run;
  }
  return runs;
}

/** A reply that says the call ran nowhere: its slot is served elsewhere (MOVED) or moving (ASK). */
export const isRedirect = (reply: unknown): boolean => reply instanceof Error && /^(MOVED|ASK) /.test(reply.message);

/** Asks the cluster for its map of slots again; resolves when the answer is in (or failed: the next request finds out). */
export function refreshSlots(cluster: Cluster): Promise<void> {
  return new Promise((resolve) => {
    (cluster as unknown as { refreshSlotsCache(callback: (error?: Error) => void): void }).refreshSlotsCache(() => resolve());
  });
}
