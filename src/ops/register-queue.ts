import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import { REGISTRY_KEYS, type ScriptOp } from './op.js';

/** What a queue records in the registry: its name, and its count of partitions (0: unpartitioned). */
export interface Registration {
  readonly queue: string;
  readonly partitions: number;
}

/**
 * Records a queue in the registry of queues (`emq:queues`, outside the queue's slot): a queue, or
 * for a partition the partitioned queue it is a part of, with its count of partitions
 * (EMQPARTITION when the registry knows the name otherwise): lua/register-queue.lua.
 */
export function registerQueueOp(registration: Registration): ScriptOp<boolean> {
  return {
    script: scripts.registerQueue,
    keys: REGISTRY_KEYS,
    args: [registration.queue, registration.partitions],
    read: (reply) => asNumber(reply, 'registerQueue') === 1,
  };
}
