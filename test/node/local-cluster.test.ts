import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scripts } from '../../src/generated/scripts.js';
import { keyspace } from '../../src/keyspace.js';
import { slotOf as slotComputed } from '../../src/cluster-slot.js';
import { type LocalCluster, startLocalCluster } from '../../src/node/local-cluster.js';

/** The cluster slot of a key (CRC16 of its hash tag mod 16384), as CLUSTER KEYSLOT answers it. */
async function slotOf(cluster: Cluster, key: string): Promise<number> {
  return Number(await cluster.cluster('KEYSLOT', key));
}

/**
 * The local Redis Cluster the tests and `npm start -- --cluster` start (issue 19's ground): three
 * masters with a replica each, every slot covered; a queue's scripts run on the node of its slot,
 * and a script given two queues' keys is refused with CROSSSLOT.
 */
describe('a local Redis Cluster', () => {
  let local: LocalCluster;
  let cluster: Cluster;
  beforeAll(async () => {
    local = await startLocalCluster({ masters: 3, replicas: 1 });
    cluster = new Cluster(local.nodes.slice(0, 3).map((n) => ({ host: n.host, port: n.port })));
    await cluster.ping();
  }, 60_000);
  afterAll(async () => {
    cluster?.disconnect();
    await local?.stop();
    for (const node of local?.nodes ?? []) expect(() => process.kill(node.pid!, 0)).toThrow();
  });

  it('forms three masters with a replica each, every slot covered', async () => {
    // CLUSTER NODES: <id> <ip:port@cport> <flags> <master id or -> ...; flags hold master or slave
    const flags = String(await cluster.cluster('NODES')).trim().split('\n').map((line) => line.split(' ')[2]!.split(','));
    expect(flags.filter((f) => f.includes('master'))).toHaveLength(3);
    expect(flags.filter((f) => f.includes('slave'))).toHaveLength(3);
    expect(String(await cluster.cluster('INFO'))).toMatch(/cluster_slots_assigned:16384/);
  });

  it("runs a queue's script on the node of its slot, and refuses one given two queues' keys (CROSSSLOT)", async () => {
    // two queues whose slots live on different masters
    const names = Array.from({ length: 40 }, (_, i) => `cluster-q${i}`);
    const masterOf = async (name: string): Promise<string> => {
      const slot = await slotOf(cluster, keyspace(name).fixed[0]!);
      const slots = (await cluster.cluster('SLOTS')) as unknown as Array<[number, number, [string, number]]>;
      const range = slots.find(([from, to]) => slot >= from && slot <= to)!;
      return `${range[2][0]}:${range[2][1]}`;
    };
    const a = names[0]!;
    let b = names[1]!;
    for (const name of names.slice(1)) {
      if ((await masterOf(name)) !== (await masterOf(a))) {
        b = name;
        break;
      }
    }
    expect(await masterOf(b)).not.toBe(await masterOf(a));
    // every fixed key of a queue is in one slot
    for (const key of keyspace(a).fixed) expect(await slotOf(cluster, key)).toBe(await slotOf(cluster, keyspace(a).fixed[0]!));

    const { lua } = scripts.counts;
    const ks = keyspace(a);
    const counts = (await cluster.eval(lua, ks.fixed.length, ...ks.fixed, ks.prefix)) as number[];
    expect(counts.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    const mixed = [...ks.fixed.slice(0, 15), keyspace(b).fixed[15]!];
    await expect(cluster.eval(lua, mixed.length, ...mixed, ks.prefix)).rejects.toThrow(/CROSSSLOT/);
  });

  it('computes each key\'s slot as the cluster does (the transport cuts a round trip by it)', async () => {
    const keys = ['foo', 'emq:{mail}:wake', 'emq:queues', '{}a', 'a{}b{c}', '{a}{b}', 'x{y', 'é{ü}', '123456789', ''];
    for (let i = 0; i < 50; i++) keys.push(`emq:{q-${i.toString(36)}}:job:JOB:${i}`);
    for (const key of keys) expect(slotComputed(key), key).toBe(await slotOf(cluster, key));
  });
});
