import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { slotOf } from '../cluster-slot.js';
import { runsByMaster } from './cluster-runs.js';

/** A cluster client's map of slots, and only that: `{a}` and `{c}` on master A, `{b}` on B, `{x}` on none. */
function mapOf(masters: Record<string, string>): Cluster {
  const slots: string[][] = [];
  for (const [tag, master] of Object.entries(masters)) slots[slotOf(`{${tag}}`)] = [master, `${master}-replica`];
  return { slots } as unknown as Cluster;
}

const cluster = mapOf({ a: 'A', b: 'B', c: 'A' });
const runsOf = (keys: Array<string | undefined>, among?: number[]) =>
  runsByMaster(cluster, keys, (key) => key, among).map(({ master, indices }) => ({ master, indices: [...indices] }));

describe('runsByMaster', () => {
  it('cuts consecutive items one master serves into one run, in order, two slots of one master together', () => {
    expect(runsOf(['{a}:1', '{c}:1', '{b}:1', '{a}:2'])).toEqual([
      { master: 'A', indices: [0, 1] },
      { master: 'B', indices: [2] },
      { master: 'A', indices: [3] },
    ]);
  });

  it('lets a keyless item join the run it comes in, and a first keyless run the first keyed item', () => {
    expect(runsOf([undefined, '{b}:1', undefined, '{a}:1'])).toEqual([
      { master: 'B', indices: [0, 1, 2] },
      { master: 'A', indices: [3] },
    ]);
    expect(runsOf([undefined, undefined])).toEqual([{ master: undefined, indices: [0, 1] }]);
  });

  it('sends a key of a slot no master is known to serve alone, joined by nothing', () => {
    expect(runsOf(['{a}:1', '{x}:1', undefined, '{x}:2', '{a}:2'])).toEqual([
      { master: 'A', indices: [0] },
      { master: undefined, indices: [1] },
      { master: undefined, indices: [2] },
      { master: undefined, indices: [3] },
      { master: 'A', indices: [4] },
    ]);
  });

  it('cuts only the items `among` names, by their indices', () => {
    expect(runsOf(['{a}:1', '{b}:1', '{a}:2', '{c}:3'], [0, 2, 3])).toEqual([{ master: 'A', indices: [0, 2, 3] }]);
  });
});
