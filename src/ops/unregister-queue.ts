import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import { REGISTRY_KEYS, type ScriptOp } from './op.js';

/** Takes queue `queue` out of the registry of queues: true when it was there (lua/unregister-queue.lua). */
export function unregisterQueueOp(queue: string): ScriptOp<boolean> {
  return { script: scripts.unregisterQueue, keys: REGISTRY_KEYS, args: [queue], read: (reply) => asNumber(reply, 'unregisterQueue') === 1 };
}
