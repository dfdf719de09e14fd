import { scripts } from '../generated/scripts.js';
import { asArray, asNumber } from './reply.js';
import { type ScriptOp, strings } from './op.js';

/** One chunk of an obliteration: `refused` (with the active count) when jobs are active and not forced (lua/obliterate.lua). */
export function obliterateOp(force: boolean, n: number): ScriptOp<{ outcome: 'done' | 'more' | 'refused'; count: number; outbox: string[] }> {
  return {
    script: scripts.obliterate,
    args: [force ? '1' : '0', n],
    read: (reply) => {
      const [code, count, outbox] = asArray(reply, 'obliterate');
      const c = asNumber(code, 'obliterate');
      return { outcome: c === 1 ? 'done' : c === 0 ? 'more' : 'refused', count: asNumber(count, 'obliterate count'), outbox: strings(outbox, 'obliterate outbox') };
    },
  };
}
