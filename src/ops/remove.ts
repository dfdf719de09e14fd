import { scripts } from '../generated/scripts.js';
import { asArray, asNumber } from './reply.js';
import { type ScriptOp, strings, type WithOutbox } from './op.js';

/**
 * Removes job `id`: true when there was one (lua/remove.lua). With `parent` (`<queue>|<id>`), only
 * while the row is that flow parent's child, and told to no parent (a removed parent's child,
 * src/flows/flow-relay.ts).
 */
export function removeOp(id: string, parent = ''): ScriptOp<WithOutbox<boolean>> {
  return {
    script: scripts.remove,
    args: [id, parent],
    read: (reply) => {
      const [code, outbox] = asArray(reply, 'remove');
      return { value: asNumber(code, 'remove') === 1, outbox: strings(outbox, 'remove outbox') };
    },
  };
}
