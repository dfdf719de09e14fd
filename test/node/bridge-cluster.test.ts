import { dirname } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { Flows } from '../../src/flows/flows.js';
import { Leases } from '../../src/lease/leases.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { useLocalCluster } from '../cluster-fixture.js';
import { buildWorker } from '../edge/worker-bundle.js';
import { checkFlowLinks } from '../flow-links.js';
import { checkInvariants } from '../invariants.js';
import { queueName, until } from '../helpers.js';

const TOKEN = 'bridge-cluster-token';
const EMQ_TOKEN = 'worker-over-cluster';

/**
 * The Upstash-REST bridge over a Redis Cluster (issue 19): a pipeline is cut into runs of one
 * master's commands and answered in order, a transaction over two slots is refused CROSSSLOT as
 * Redis would, and the edge code (UpstashTransport, the Worker under miniflare) runs over it.
 */
describe('the bridge over a Redis Cluster', () => {
  const cluster = useLocalCluster();
  let bridge: RunningBridge;
  let transport: IoredisTransport;
  let upstash: UpstashTransport;

  /** POSTs `body` to the bridge's `path` with the token. */
  async function post(path: string, body: unknown): Promise<{ status: number; json: unknown }> {
    const res = await fetch(`${bridge.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json() };
  }

  beforeAll(async () => {
    // one node given, as `emq bridge` takes REDIS_CLUSTER_NODES: the rest is learnt from it
    bridge = await startBridge({ clusterNodes: [cluster.nodes[0]!], token: TOKEN });
    transport = IoredisTransport.connectCluster(cluster.nodes);
    await transport.ping();
    upstash = UpstashTransport.connect({ url: bridge.url, token: TOKEN });
  });
  afterAll(async () => {
    await upstash?.close();
    await transport?.close();
    await bridge?.close();
  });

  it('answers a pipeline over three masters in order, keyless commands included', async () => {
    const [a, b, c] = cluster.queuesOnMasters(3, 'rest').map((name) => `{${name}}:k`);
    const { status, json } = await post('/pipeline', [
      ['PING'],
      ['SET', a, '1'],
      ['SET', b, '2'],
      ['INCR', a],
      ['TIME'],
      ['SET', c, '3'],
      ['MGET', b, b],
      ['GET', a],
    ]);
    expect(status).toBe(200);
    const replies = json as Array<{ result?: unknown; error?: string }>;
    expect(replies.map((r) => r.error)).toEqual(Array(8).fill(undefined));
    expect(replies.map((r) => r.result).filter((_, i) => i !== 4)).toEqual(['PONG', 'OK', 'OK', 2, 'OK', ['2', '2'], '2']);
    expect(await cluster.raw.get(c!)).toBe('3');
    expect(await post('/', ['GET', b])).toEqual({ status: 200, json: { result: '2' } });
  });

  it('refuses what a cluster refuses: a transaction or a command over two slots (CROSSSLOT), the rest of the pipeline answered', async () => {
    const [a, b] = cluster.queuesOnMasters(2, 'slot').map((name) => `{${name}}:k`);
    const crossed = await post('/multi-exec', [['SET', a, '1'], ['SET', b, '2']]);
    expect(crossed).toEqual({ status: 400, json: { error: "CROSSSLOT Keys in request don't hash to the same slot" } });
    expect(await cluster.raw.exists(a!, `${a}:never`)).toBe(0);
    const one = await post('/multi-exec', [['SET', a, '1'], ['INCR', a], ['GET', a]]);
    expect(one).toEqual({ status: 200, json: [{ result: 'OK' }, { result: 2 }, { result: '2' }] });
    const mixed = await post('/pipeline', [['SET', b, 'x'], ['MGET', a, b], ['GET', b]]);
    expect(mixed.json).toEqual([{ result: 'OK' }, { error: "CROSSSLOT Keys in request don't hash to the same slot" }, { result: 'x' }]);
    expect((await post('/', ['MGET', a, b])).status).toBe(400);
  });

  it('runs a flow across queues on three masters through UpstashTransport, each job once', async () => {
    const [pdf, render, thumbs] = cluster.queuesOnMasters(3, 'flow');
    const queues = { pdf: new Queue(upstash, pdf!), render: new Queue(upstash, render!), thumbs: new Queue(upstash, thumbs!) };
    // the tree goes out in one request: children on two masters before their parent on a third
    const tree = await new Flows(upstash).add({
      queue: pdf!,
      id: 'report',
      payload: { report: 1 },
      children: [
        ...[1, 2].map((page) => ({ queue: render!, payload: { page } })),
        { queue: thumbs!, payload: { page: 0 } },
      ],
    });
    expect(tree.state).toBe('waiting');
    const runs: string[] = [];
    for (const queue of [queues.render, queues.thumbs]) {
      const leases = new Leases(queue);
      const { jobs } = await leases.claim(10, 30_000);
      runs.push(...jobs.map((job) => job.id));
      await leases.complete(jobs.map((job) => ({ id: job.id, token: job.token, result: JSON.stringify(job.payload) })));
      await leases.relayed();
    }
    const parent = new Leases(queues.pdf);
    let claimed: Awaited<ReturnType<typeof parent.claim>>['jobs'] = [];
    await until(async () => (claimed = (await parent.claim(1, 30_000)).jobs).length === 1, 10_000);
    expect(claimed[0]!.children?.map((c) => c.result)).toEqual([{ page: 1 }, { page: 2 }, { page: 0 }]);
    await parent.complete([{ id: claimed[0]!.id, token: claimed[0]!.token, result: '"merged"' }]);
    runs.push(claimed[0]!.id);
    expect(runs.sort()).toEqual(['JOB:report', 'JOB:report.0', 'JOB:report.1', 'JOB:report.2']);
    expect(await new Queue(transport, pdf!).getJob('report')).toMatchObject({ state: 'completed', result: 'merged' });
    expect(await checkFlowLinks(cluster.raw as never, [pdf!, render!, thumbs!])).toEqual([]);
    for (const name of [pdf!, render!, thumbs!]) expect(await checkInvariants(cluster.raw as never, name)).toEqual([]);
  });

  it('serves the Worker under miniflare: a job enqueued over its HTTP API runs in its scheduled beat', async () => {
    const bundle = buildWorker();
    const mf = new Miniflare({
      modules: true,
      scriptPath: bundle.path,
      modulesRoot: dirname(bundle.path),
      compatibilityDate: '2026-04-26',
      host: '127.0.0.1',
      port: 0,
      bindings: { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: TOKEN, EMQ_TOKEN, EMQ_DRAIN_ON_ENQUEUE_MS: '0' },
    });
    try {
      const url = (await mf.ready).toString().replace(/\/$/, '');
      const demo = new Queue(transport, 'demo');
      const id = queueName('edge');
      const res = await fetch(`${url}/v1/queues/demo/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ id, payload: { message: 'over the cluster' } }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const worker = await mf.getWorker();
      await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
      await until(async () => (await demo.getJob(id))?.state === 'completed', 10_000);
      const metrics = await (await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${EMQ_TOKEN}` } })).text();
      expect(metrics).toContain('emq_jobs_completed_total{queue="demo"} 1');
      expect(await checkInvariants(cluster.raw as never, 'demo')).toEqual([]);
    } finally {
      await mf.dispose();
    }
  }, 120_000);
});
