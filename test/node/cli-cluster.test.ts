import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_REGISTRY } from '../../src/keyspace.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { slotOf } from '../../src/cluster-slot.js';
import { type Run, startEmq } from '../cli-run.js';
import { useLocalCluster } from '../cluster-fixture.js';
import { checkInvariants } from '../invariants.js';
import { until } from '../helpers.js';

/**
 * `emq ...args` as a child process; REDIS_URL, REDIS_CLUSTER_NODES and EMQ_TOKEN only as `env`
 * says, whatever the shell running vitest has set: REDIS_URL beside REDIS_CLUSTER_NODES is a
 * usage error, and EMQ_TOKEN would make `emq serve` refuse the test's requests.
 */
const start = (args: string[], env: Record<string, string | undefined>) => startEmq(args, { REDIS_URL: undefined, REDIS_CLUSTER_NODES: undefined, EMQ_TOKEN: undefined, ...env });

const emq = (args: string[], env: Record<string, string | undefined>): Promise<Run> => start(args, env).done;

/**
 * `emq` over a Redis Cluster (issue 19): REDIS_CLUSTER_NODES names it, REDIS_URL beside it is a
 * usage error, and `emq serve` serves queues whose slots live on different masters, `/metrics`,
 * `GET /v1/queues` and `emq queues` included (the registry on one node, the queues on others).
 */
describe('emq over a Redis Cluster (REDIS_CLUSTER_NODES)', () => {
  const cluster = useLocalCluster();
  /** REDIS_CLUSTER_NODES as a person might write it: two nodes, spaced and padded. */
  let nodes: string;
  let transport: IoredisTransport;
  beforeAll(async () => {
    nodes = ` ${cluster.nodes[0]} ,  ${cluster.nodes[1]}`;
    transport = IoredisTransport.connectCluster(cluster.nodes);
    await transport.ping();
  });
  afterAll(async () => {
    await transport?.close();
  });

  it('enqueues and reads the stats of queues on two masters', async () => {
    const [a, b] = cluster.queuesOnMasters(2, 'cli');
    expect(cluster.masterOf(a!)).not.toBe(cluster.masterOf(b!));
    const env = { REDIS_CLUSTER_NODES: nodes };
    const added = await Promise.all([emq(['enqueue', a!, '{"n":1}'], env), emq(['enqueue', b!, '{"n":2}', '--group', 'g'], env), emq(['enqueue', b!, '{"n":3}'], env)]);
    for (const run of added) expect(run.code, run.stderr).toBe(0);
    const [statsA, statsB] = await Promise.all([emq(['stats', a!], env), emq(['stats', b!], env)]);
    expect(statsA.code, statsA.stderr).toBe(0);
    expect(JSON.parse(statsA.stdout)).toMatchObject({ queue: a, paused: false, counts: { pending: 1 } });
    expect(JSON.parse(statsB.stdout)).toMatchObject({ queue: b, counts: { pending: 2 } });
    // the admin commands go the same way
    const listed = await emq(['jobs', b!, 'pending'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('"n":3');
    for (const name of [a!, b!]) expect(await checkInvariants(cluster.raw as never, name)).toEqual([]);
  });

  it('refuses REDIS_URL and REDIS_CLUSTER_NODES together, and a node that is not host:port: one line, exit 2, nothing connected', async () => {
    const both = await emq(['stats', 'mail'], { REDIS_CLUSTER_NODES: nodes, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(both.code).toBe(2);
    expect(both.stderr.split('\n')[0]).toBe('emq stats: set REDIS_URL or REDIS_CLUSTER_NODES, not both');
    expect(both.stdout).toBe('');
    const bad = await emq(['enqueue', 'mail', '{}'], { REDIS_CLUSTER_NODES: `${cluster.nodes[0]},redis-7` });
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe('emq enqueue: REDIS_CLUSTER_NODES: "redis-7" is not host:port (e.g. 127.0.0.1:7000)');
  });

  it('names the cluster when it cannot reach it (exit 1, one line)', async () => {
    const run = await emq(['stats', 'mail'], { REDIS_CLUSTER_NODES: '127.0.0.1:1', REDIS_CONNECT_TIMEOUT_MS: '500' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^emq stats: .*127\.0\.0\.1:1/);
  });

  it('with EMQ_DURABILITY=replicated, an enqueue is acknowledged once the master\'s replica has it; a bad value is exit 2 in one line', async () => {
    const [name] = cluster.queuesOnMasters(1, 'durable');
    const env = { REDIS_CLUSTER_NODES: nodes, EMQ_DURABILITY: 'replicated', EMQ_REPLICATION_TIMEOUT_MS: '2000' };
    const added = await emq(['enqueue', name!, '{"n":1}', '--id', 'kept'], env);
    expect(added.code, added.stderr).toBe(0);
    // the master's replica holds the row (WAIT 1 answered before the command said so)
    const master = cluster.masterOf(name!);
    // CLUSTER NODES: <id> <host:port@cport> <flags> <master id or -> ...
    const lines = String(await cluster.raw.cluster('NODES')).trim().split('\n');
    const masterId = lines.find((line) => line.split(' ')[1]!.split('@')[0] === master)!.split(' ')[0];
    const replicaPort = Number(lines.find((line) => line.split(' ')[3] === masterId)!.split(' ')[1]!.split('@')[0]!.split(':')[1]);
    const replica = new Redis(replicaPort, '127.0.0.1');
    try {
      await replica.call('READONLY');
      expect(await replica.exists(`emq:{${name}}:job:JOB:kept`)).toBe(1);
    } finally {
      replica.disconnect();
    }

    const bad = await emq(['enqueue', name!, '{"n":2}'], { ...env, EMQ_DURABILITY: 'always' });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')[0]).toMatch(/EMQ_DURABILITY.*'acknowledged' or 'replicated', got "always"/);
    expect(await new Queue(transport, name!).stats()).toMatchObject({ counts: { pending: 1 } });
  });

  it('serves the API over the cluster: jobs enqueued over HTTP run on a Node consumer, /metrics, GET /v1/queues and emq queues list queues of two masters', async () => {
    const [a, b] = cluster.queuesOnMasters(2, 'serve');
    const server = start(['serve', '--port', '0'], { REDIS_CLUSTER_NODES: nodes });
    const consumers: Consumer[] = [];
    try {
      await until(() => /^http:\/\/\S+\n/.test(server.stdout()), 20_000);
      const url = server.stdout().trim();
      for (const [name, n] of [[a!, 1], [b!, 2], [b!, 3]] as const) {
        const res = await fetch(`${url}/v1/queues/${name}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payload: { n } }) });
        expect(res.status, await res.clone().text()).toBe(201);
      }
      const seen: number[] = [];
      for (const name of [a!, b!]) {
        const consumerTransport = IoredisTransport.connectCluster(cluster.nodes);
        const consumer = new Consumer<{ n: number }>(consumerTransport, name, (job) => void seen.push(job.payload.n), { ownsTransport: true, log: () => {} });
        consumers.push(consumer.start() as Consumer);
      }
      // a handler has run before its completion is written: wait for the counts
      const completed = async (name: string): Promise<number> => (await new Queue(transport, name).stats()).counts.completed;
      await until(async () => (await completed(a!)) === 1 && (await completed(b!)) === 2, 15_000);
      expect(seen.sort()).toEqual([1, 2, 3]);

      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain(`emq_jobs_completed_total{queue="${a}"} 1`);
      expect(metrics).toContain(`emq_jobs_completed_total{queue="${b}"} 2`);
      // two masters serve the two queues, and the registry /metrics read them from is a key of its own
      expect(cluster.masterOf(a!)).not.toBe(cluster.masterOf(b!));
      expect(cluster.raw.slots[slotOf(QUEUE_REGISTRY)]?.[0]).toMatch(/^127\.0\.0\.1:\d+$/);
      // GET /v1/queues and `emq queues` read the same registry and counts across the masters
      const listed = (await (await fetch(`${url}/v1/queues`)).json()) as { queues: Array<{ queue: string; counts: { completed: number } }> };
      const completedOf = (list: typeof listed, name: string): number | undefined => list.queues.find((q) => q.queue === name)?.counts.completed;
      expect([completedOf(listed, a!), completedOf(listed, b!)]).toEqual([1, 2]);
      const cli = await emq(['queues'], { REDIS_CLUSTER_NODES: nodes });
      expect(cli.code, cli.stderr).toBe(0);
      const printed = JSON.parse(cli.stdout) as typeof listed;
      expect([completedOf(printed, a!), completedOf(printed, b!)]).toEqual([1, 2]);
      const queue = new Queue(transport, b!);
      expect((await queue.stats()).counts).toMatchObject({ completed: 2, pending: 0, active: 0 });
      for (const name of [a!, b!]) expect(await checkInvariants(cluster.raw as never, name)).toEqual([]);
    } finally {
      await Promise.all(consumers.map((c) => c.stop()));
      server.child.kill('SIGTERM');
      const stopped = await server.done;
      expect(stopped.stderr).toMatch(/over Redis Cluster 127\.0\.0\.1:\d+,127\.0\.0\.1:\d+/);
    }
  });
});
