import { spawnSync } from 'node:child_process';
import { Cluster, type Redis } from 'ioredis';
import { keyspace } from '../../src/keyspace.js';
import { slotOf } from '../../src/cluster-slot.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { formCluster } from '../../src/node/local-cluster.js';
import { findRedisServer, freePort } from '../../src/node/local-redis.js';
import { Queue, type QueueOptions } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { DurableRedis } from '../lib/durable-redis.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The queues' options: writes wait for a replica (`WAIT 1`), completed rows kept for the count. */
const DURABLE = { durability: 'replicated', keepCompletedMs: -1 } as const satisfies QueueOptions;

/**
 * A master of a three-master Redis Cluster (a replica each, `cluster-node-timeout` 1 s, AOF
 * everysec) SIGKILLed under load, again and again: each time its replica is promoted, the killed
 * node starts again on its files and rejoins as the new master's replica, and the next kill takes
 * another queue's master. Three queues, one per master; a producer per queue enqueues with ids of
 * its own (a failure is sent again with the same id) and two parked consumers per queue run the
 * jobs, everything with `durability: 'replicated'`. Every enqueue acknowledged completes (at least
 * once: a claim not yet replicated runs its job again), no acknowledged completion is undone, and
 * each queue is consistent after.
 */
export const clusterFailover: Scenario = {
  name: 'cluster-failover',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const kills = ctx.quick ? 2 : 6;
    const started = performance.now();
    const binary = findRedisServer();
    if (!binary) throw new Error('redis-server not found');
    const args = ['--cluster-enabled', 'yes', '--cluster-node-timeout', '1000', '--cluster-config-file', 'nodes.conf', '--cluster-require-full-coverage', 'no', '--repl-diskless-sync-delay', '0'];
    const nodes: DurableRedis[] = [];
    for (let i = 0; i < 6; i++) nodes.push(new DurableRedis(binary, await freePort(), 'everysec', args));
    const stopAll = async (): Promise<void> => {
      await Promise.all(nodes.map((n) => n.stop()));
    };
    try {
      for (const node of nodes) await node.start();
      await formCluster(nodes.map((n) => n.port), { masters: 3, replicas: 1 });
      const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
      const raw = new Cluster(addresses, { redisOptions: { protocol: 2 } });
      raw.on('error', () => {});
      await raw.ping();
      // a queue on each master
      const names: string[] = [];
      const masters = new Set<string>();
      for (let i = 0; names.length < 3 && i < 500; i++) {
        const name = `chaos-cluster-${i}`;
        const master = raw.slots[slotOf(keyspace(name).key('meta'))]![0]!;
        if (!masters.has(master)) {
          masters.add(master);
          names.push(name);
        }
      }

      const producerTransport = IoredisTransport.connectCluster(addresses, { connectTimeoutMs: 3_000 });
      const acknowledged = new Map<string, Set<string>>(names.map((n) => [n, new Set()]));
      const completedAck = new Map<string, Set<string>>(names.map((n) => [n, new Set()]));
      let producerRetries = 0;
      let consumerErrors = 0;
      const consumers = names.flatMap((name) =>
        [0, 1].map(() => {
          const transport = IoredisTransport.connectCluster(addresses, { connectTimeoutMs: 3_000 });
          return new Consumer<{ n: number }>(transport, new Queue<{ n: number }>(transport, name, DURABLE), () => sleep(1), {
            concurrency: 5,
            leaseMs: 3_000,
            beatMs: 500,
            ownsTransport: true,
            log: false,
            hooks: { onCompleted: (job) => void completedAck.get(name)!.add(job.id), onError: () => void consumerErrors++ },
          }).start();
        }),
      );
      let producing = true;
      const produce = names.map(async (name) => {
        const queue = new Queue<{ n: number }>(producerTransport, name, DURABLE);
        for (let n = 0; producing; n++) {
          for (;;) {
            try {
              const { id } = await queue.add({ n }, { id: `n${n}` });
              acknowledged.get(name)!.add(id);
              break;
            } catch {
              producerRetries++;
              await sleep(50);
            }
          }
          await sleep(ctx.quick ? 4 : 2);
        }
      });

      // kill the master of each queue in turn; its replica takes over, and it rejoins as a replica
      let done = 0;
      const failovers: number[] = [];
      for (let k = 0; k < kills; k++) {
        await sleep(ctx.quick ? 1_500 : 2_500);
        const name = names[k % names.length]!;
        const port = masterPort(nodes, slotOf(keyspace(name).key('meta')));
        const victim = nodes.find((n) => n.port === port)!;
        const killedAt = performance.now();
        await victim.kill();
        await waitFor(() => {
          const now = masterPort(nodes, slotOf(keyspace(name).key('meta')));
          return now !== undefined && now !== port;
        }, 30_000, 'a replica promoted');
        failovers.push(Math.round(performance.now() - killedAt));
        await victim.start();
        await waitFor(() => roleOf(victim.port) === 'slave', 30_000, 'the killed master back as a replica');
        done++;
      }
      producing = false;
      await Promise.all(produce);

      const total = [...acknowledged.values()].reduce((sum, ids) => sum + ids.size, 0);
      const queues = names.map((name) => new Queue(producerTransport, name, DURABLE));
      const deadline = performance.now() + (ctx.quick ? 60_000 : 180_000);
      const completedOf = async (): Promise<number> => (await Promise.all(queues.map((q) => q.stats().then((s) => s.counts.completed)))).reduce((a, b) => a + b, 0);
      while ((await completedOf().catch(() => 0)) < total && performance.now() < deadline) await sleep(200);
      await Promise.all(consumers.map((c) => c.stop()));

      let lost = 0;
      let undone = 0;
      let notFinished = 0;
      let violations = 0;
      for (const name of names) {
        const k = keyspace(name);
        for (const id of acknowledged.get(name)!) if ((await raw.exists(k.job(id))) === 0) lost++;
        for (const id of completedAck.get(name)!) if ((await raw.hget(k.job(id), 's')) !== 'completed') undone++;
        const { counts } = await new Queue(producerTransport, name).stats();
        notFinished += counts.pending + counts.scheduled + counts.active;
        violations += (await checkInvariants(raw as unknown as Redis, name)).length;
      }
      raw.disconnect();
      await producerTransport.close();
      return {
        scenario: 'cluster-failover',
        faults: `a queue's master SIGKILLed ${done} time(s), its replica promoted, the node restarted as a replica`,
        failover_ms: failovers.length > 0 ? failovers.sort((a, b) => a - b)[Math.floor(failovers.length / 2)]! : 0,
        acknowledged: total,
        producer_retries: producerRetries,
        consumer_errors: consumerErrors,
        jobs_lost: lost,
        completions_undone: undone,
        not_finished: notFinished,
        invariant_violations: violations,
        duplicate_jobs: 0,
        reruns_unexplained: 0,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      await stopAll();
    }
  },
};

/** What CLUSTER NODES says on the first node that answers: the port of the master serving `slot`. */
function masterPort(nodes: readonly DurableRedis[], slot: number): number | undefined {
  for (const node of nodes) {
    const out = spawnSync('redis-cli', ['-p', String(node.port), 'cluster', 'nodes'], { encoding: 'utf8', timeout: 2_000 }).stdout;
    if (!out) continue;
    for (const line of out.trim().split('\n')) {
      const [, address, flags, , , , , state, ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail') || state !== 'connected') continue;
      for (const range of ranges) {
        const [from, to = from] = range.split('-').map(Number);
        if (slot >= from! && slot <= to!) return Number(address!.split('@')[0]!.split(':')[1]);
      }
    }
    return undefined;
  }
  return undefined;
}

/** `master` or `slave`, as the node at `port` says (ROLE). */
function roleOf(port: number): string | undefined {
  const out = spawnSync('redis-cli', ['-p', String(port), 'role'], { encoding: 'utf8', timeout: 2_000 }).stdout;
  return out?.split('\n')[0]?.trim();
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}
