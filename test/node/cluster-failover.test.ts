import { type ChildProcess, spawn } from 'node:child_process';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EnqueueResult, Queue } from '../../src/index.js';
import { keyspace } from '../../src/keyspace.js';
import { slotOf } from '../../src/cluster-slot.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type LocalCluster, startLocalCluster } from '../../src/node/local-cluster.js';
import { findRedisServer } from '../../src/node/local-redis.js';
import { checkInvariants } from '../invariants.js';
import { sleep } from '../helpers.js';

/** How long a cluster node may go unheard before its replica takes over (cluster-node-timeout). */
const NODE_TIMEOUT_MS = 1000;

/** `host:port` of the master serving `key`, as CLUSTER NODES tells it now (asked of `via`). */
async function masterOfSlot(via: Redis, slot: number): Promise<string | undefined> {
  const lines = String(await via.call('CLUSTER', 'NODES')).trim().split('\n');
  for (const line of lines) {
    const [, address, flags, , , , , state, ...ranges] = line.split(' ');
    if (!flags!.split(',').includes('master') || flags!.includes('fail') || state !== 'connected') continue;
    for (const range of ranges) {
      const [from, to = from] = range.split('-').map(Number);
      if (slot >= from! && slot <= to!) return address!.split('@')[0];
    }
  }
  return undefined;
}

/** Resolves once `check` holds, polling every 50 ms; throws naming `what` after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/**
 * Issue 19, failover: producers (durability 'replicated') add jobs to a queue on every master and
 * two consumers (each its own cluster client, durability 'replicated') run them; one master is
 * SIGKILLed under load. Its replica is promoted, the killed node is started again (it comes back
 * as the new master's replica, which 'replicated' needs to acknowledge anything on that shard
 * again), and every job a producer saw acknowledged completes at least once; each queue's
 * keyspace is whole after.
 */
describe('a master killed under load', () => {
  let local: LocalCluster;
  let raw: Cluster;
  let restarted: ChildProcess | undefined;

  beforeAll(async () => {
    local = await startLocalCluster({ nodeTimeoutMs: NODE_TIMEOUT_MS });
    raw = new Cluster(local.nodes.map((n) => ({ host: n.host, port: n.port })), { redisOptions: { protocol: 2 } });
    raw.on('error', () => {});
    await raw.ping();
  }, 60_000);

  afterAll(async () => {
    raw?.disconnect();
    if (restarted && restarted.exitCode === null) {
      const exited = new Promise((resolve) => restarted!.once('exit', resolve));
      restarted.kill('SIGTERM');
      await exited;
    }
    await local?.stop();
  });

  it('loses no acknowledged job: the replica takes over, producers and consumers carry on', async () => {
    // one queue per master, by the map of slots
    const names: string[] = [];
    const masters = new Set<string>();
    for (let i = 0; names.length < local.masters; i++) {
      const name = `failover-${i}`;
      const master = raw.slots[slotOf(keyspace(name).fixed[0]!)]![0]!;
      if (masters.has(master)) continue;
      masters.add(master);
      names.push(name);
    }
    const nodes = local.nodes.map((n) => `${n.host}:${n.port}`);
    const options = { durability: 'replicated', replicationTimeoutMs: 500 } as const;

    const producer = IoredisTransport.connectCluster(nodes, { connectTimeoutMs: 2_000 });
    const consumerTransports = [0, 1].map(() => IoredisTransport.connectCluster(nodes, { connectTimeoutMs: 2_000 }));
    const seen = new Map(names.map((name) => [name, new Set<string>()]));
    const runs = new Map(names.map((name) => [name, 0]));
    const errors: string[] = [];
    const consumers = consumerTransports.flatMap((transport) =>
      names.map((name) =>
        new Consumer<number>(
          transport,
          new Queue<number>(transport, name, options),
          async (job) => {
            seen.get(name)!.add(job.id);
            runs.set(name, runs.get(name)! + 1);
          },
          { concurrency: 4, leaseMs: 8_000, beatMs: 5_000, log: false, hooks: { onError: (e) => errors.push(String(e)) } },
        ).start(),
      ),
    );

    // producers: one add in flight per queue; a failed add goes again with the same id
    let producing = true;
    const acknowledged = new Map(names.map((name) => [name, new Set<string>()]));
    let failedAdds = 0;
    let longestAddMs = 0;
    const wakeMs: number[] = [];
    const addErrors = new Set<string>();
    const sizes = (): string => names.map((n) => acknowledged.get(n)!.size).join('/');
    const produce = async (name: string): Promise<void> => {
      const queue = new Queue<number>(producer, name, options);
      for (let i = 0; producing; i++) {
        for (;;) {
          let result: EnqueueResult | undefined;
          const sentAt = Date.now();
          try {
            result = await queue.add(i, { id: `p${i}` });
            longestAddMs = Math.max(longestAddMs, Date.now() - sentAt);
          } catch (error) {
            longestAddMs = Math.max(longestAddMs, Date.now() - sentAt);
            failedAdds++;
            addErrors.add(String(error).slice(0, 160));
            await sleep(20);
            continue;
          }
          acknowledged.get(name)!.add(result.id);
          break;
        }
      }
    };
    const producers = names.map(produce);

    await sleep(1_500);
    // the victim: the master of the first queue's slot, by its port
    const slot = slotOf(keyspace(names[0]!).fixed[0]!);
    const victimAddress = raw.slots[slot]![0]!;
    const victim = local.nodes.find((n) => `${n.host}:${n.port}` === victimAddress)!;
    const victimClient = raw.nodes('all').find((n) => `${n.options.host}:${n.options.port}` === victimAddress)!;
    const [, dir] = (await victimClient.config('GET', 'dir')) as [string, string];
    const survivor = raw.nodes('master').find((n) => `${n.options.host}:${n.options.port}` !== victimAddress)!;
    const before = acknowledged.get(names[0]!)!.size;
    expect(before).toBeGreaterThan(0);
    const killedAt = Date.now();
    const atKill = sizes();
    process.kill(victim.pid!, 'SIGKILL');

    // its replica takes over the slots
    await until('a replica promoted', async () => {
      const now = await masterOfSlot(survivor, slot);
      return now !== undefined && now !== victimAddress;
    }, 15_000);
    const promotedAfterMs = Date.now() - killedAt;
    const atPromotion = sizes();
    // the killed node comes back (same port, same nodes.conf): the cluster makes it the new master's replica
    restarted = spawn(
      findRedisServer()!,
      ['--port', String(victim.port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--cluster-enabled', 'yes',
        '--cluster-node-timeout', String(NODE_TIMEOUT_MS), '--cluster-require-full-coverage', 'no', '--repl-diskless-sync-delay', '0'],
      { stdio: 'ignore' },
    );
    const back = new Redis(victim.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
    back.on('error', () => {});
    await until('the killed node back as a synced replica', async () => {
      const info = await back.info('replication').catch(() => '');
      return /role:slave/.test(info) && /master_link_status:up/.test(info);
    }, 20_000);
    back.disconnect();
    const backAfterMs = Date.now() - killedAt;
    const atBackSizes = sizes();
    // load on the promoted master, then stop producing
    const atBack = acknowledged.get(names[0]!)!.size;
    await until('adds acknowledged on the promoted master', () => acknowledged.get(names[0]!)!.size > atBack + 20, 15_000);
    producing = false;
    await Promise.all(producers);

    // every acknowledged job completes at least once
    for (const name of names) {
      const queue = new Queue(producer, name);
      const expected = acknowledged.get(name)!;
      await until(`${name}: every acknowledged job completed`, async () => {
        const { counts } = await queue.stats();
        return counts.completed >= expected.size && [...expected].every((id) => seen.get(name)!.has(id));
      }, 40_000);
      const { counts } = await queue.stats();
      expect(counts, name).toMatchObject({ pending: 0, scheduled: 0, dead: 0, completed: expected.size });
    }
    // the doorbell still wakes a parked consumer of every queue, the failed-over one included:
    // a new job runs well within the beat (5 s)
    for (const name of names) {
      const added = Date.now();
      const { id } = await new Queue<number>(producer, name).add(-1);
      await until(`${name}: a job after the failover woken for`, () => seen.get(name)!.has(id), 2_500);
      wakeMs.push(Date.now() - added);
    }
    await Promise.all(consumers.map((c) => c.stop()));
    for (const name of names) expect(await checkInvariants(raw as unknown as Redis, name), name).toEqual([]);
    await producer.close();
    await Promise.all(consumerTransports.map((t) => t.close()));

    const total = [...acknowledged.values()].reduce((n, s) => n + s.size, 0);
    const reruns = [...runs.values()].reduce((a, b) => a + b, 0) - [...seen.values()].reduce((n, s) => n + s.size, 0);
    console.log(
      `[failover] ${total} jobs acknowledged (${failedAdds} adds sent again, the longest add ${longestAddMs} ms), promoted after ${promotedAfterMs} ms, ` +
        `replica back after ${backAfterMs} ms, ${reruns} runs of a job already run, ${errors.length} consumer errors; ` +
        `woken in ${wakeMs.join('/')} ms; acknowledged per queue at the kill ${atKill}, at promotion ${atPromotion}, replica back ${atBackSizes}, end ${sizes()}`,
    );
    console.log(`[failover] add errors:\n${[...addErrors].join('\n')}\n[failover] consumer errors:\n${[...new Set(errors.map((e) => e.slice(0, 160)))].join('\n')}`);
  }, 120_000);

  it("follows MOVED for a replicated write whose master handed its slots over (CLUSTER FAILOVER), on a stale map of slots", async () => {
    const nodes = local.nodes.map((n) => `${n.host}:${n.port}`);
    // slotsRefreshInterval 0: the client learns of the handover only from the MOVED it gets
    const transport = IoredisTransport.connectCluster(nodes, { slotsRefreshInterval: 0 });
    const queue = new Queue<number>(transport, 'handover-0', { durability: 'replicated', replicationTimeoutMs: 1_000 });
    expect(await queue.add(0, { id: 'before' })).toMatchObject({ state: 'pending' });
    const slot = slotOf(keyspace(queue.name).fixed[0]!);
    const cluster = transport.redis as Cluster;
    const oldMaster = cluster.slots[slot]![0]!;
    // its replica takes over by agreement: nothing lost, the old master becomes its replica
    const lines = String(await raw.call('CLUSTER', 'NODES')).trim().split('\n').map((l) => l.split(' '));
    const masterId = lines.find((l) => l[1]!.split('@')[0] === oldMaster)![0]!;
    const replicaAddress = lines.find((l) => l[3] === masterId)![1]!.split('@')[0]!;
    const replica = new Redis(Number(replicaAddress.split(':')[1]), '127.0.0.1');
    await replica.call('CLUSTER', 'FAILOVER');
    const survivor = raw.nodes('master').find((n) => `${n.options.host}:${n.options.port}` !== oldMaster && `${n.options.host}:${n.options.port}` !== replicaAddress)!;
    await until('the replica took over', async () => (await masterOfSlot(survivor, slot)) === replicaAddress, 15_000);
    await until('the old master attached as its replica', async () => /connected_slaves:1/.test(await replica.info('replication')), 15_000);
    replica.disconnect();
    expect(cluster.slots[slot]![0]).toBe(oldMaster); // the client's map is stale
    // a pipeline with a WAIT in it is not redirected by ioredis: the transport sends the call again
    expect(await queue.add(1, { id: 'after' })).toMatchObject({ state: 'pending' });
    expect(cluster.slots[slot]![0]).toBe(replicaAddress);
    expect((await queue.stats()).counts).toMatchObject({ pending: 2 });
    expect(await checkInvariants(raw as unknown as Redis, queue.name)).toEqual([]);
    await transport.close();
  }, 60_000);
});
