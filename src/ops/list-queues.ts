import { scripts } from '../generated/scripts.js';
import { asArray, asString } from './reply.js';
import { REGISTRY_KEYS, type ScriptOp } from './op.js';

/** What the registry holds: every queue's name, sorted, and the partitioned ones' counts of partitions. */
export interface RegisteredQueues {
  readonly names: string[];
  readonly partitions: ReadonlyMap<string, number>;
}

/** The names of every queue that has had a job enqueued (the registry), sorted (lua/list-queues.lua). */
export function listQueuesOp(): ScriptOp<RegisteredQueues> {
  return {
    script: scripts.listQueues,
    keys: REGISTRY_KEYS,
    args: [],
    read: (reply) => {
      const [names, counts] = asArray(reply, 'listQueues');
      const flat = asArray(counts ?? [], 'partitions');
      const partitions = new Map<string, number>();
      for (let i = 0; i + 1 < flat.length; i += 2) partitions.set(asString(flat[i]!, 'queue name'), Number(asString(flat[i + 1]!, 'partitions')));
      return { names: asArray(names ?? [], 'listQueues').map((name) => asString(name, 'queue name')), partitions };
    },
  };
}
