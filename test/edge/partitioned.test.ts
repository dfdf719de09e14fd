import type { Redis } from 'ioredis';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BeatSummary } from '../../src/serverless/bounded-beat.js';
import type { RunningBridge } from '../../src/node/bridge/index.js';
import type { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { partitionName } from '../../src/partitions/partition-of.js';
import { PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { queueName, sleep, until } from '../helpers.js';
import { checkPartitionedQueue } from '../invariants.js';
import type { MiniflareWorker } from './miniflare-worker.js';
import { type ReportingSuite, startReportingSuite } from './reporting-suite.js';
import { reportingWorkerEntry } from './worker-bundle.js';

const BRIDGE_TOKEN = 'bridge-token-for-partition-tests';
const EMQ_TOKEN = 'worker-token-for-partition-tests';
const PARTITIONS = 8;

/**
 * The Worker of this suite: `createWorker` (the shipped Worker's code) serving the partitioned
 * queue its `PQ` binding names (`PARTS` partitions) and the plain queue `PLAIN` names, each handler
 * reporting every run, the log every entry, to `REPORT_URL`.
 */
const ENTRY = reportingWorkerEntry(
  `
    const queue = env.PQ;
    const plain = env.PLAIN;
    worker = createWorker({
      handlers: {
        [queue]: async (job) => { await report({ queue, run: { id: job.id, group: job.group ?? null, payload: job.payload } }); },
        [plain]: async (job) => { await report({ queue: plain, run: { id: job.id, group: null, payload: job.payload } }); },
      },
      partitions: { [queue]: Number(env.PARTS) },
      log: (entry) => void report({ queue, log: entry }),
    });
`,
);

/** A run the Worker's handler reported. */
interface Run {
  readonly id: string;
  readonly group: string | null;
  readonly payload: { readonly n: number };
}

/** A `scheduled beat` log line: the first request's count and each drain's summaries. */
interface ScheduledBeatLog {
  readonly msg: 'scheduled beat';
  readonly firstRequests: number;
  readonly requests: number;
  readonly summaries: ReadonlyArray<BeatSummary | { acknowledgedLater: unknown }>;
}

/** What the Worker reported (to a report server): runs by queue, in the order they arrived, its log entries and its `scheduled beat` logs. */
class Reports {
  readonly runs = new Map<string, Run[]>();
  readonly beats: ScheduledBeatLog[] = [];
  readonly logs: Array<Record<string, unknown>> = [];

  /** One report of the Worker: a run, or a log entry. */
  take(report: unknown): void {
    const body = report as { queue: string; run?: Run; log?: Record<string, unknown> };
    if (body.run) this.runs.set(body.queue, [...(this.runs.get(body.queue) ?? []), body.run]);
    if (body.log) this.logs.push(body.log);
    if (body.log?.msg === 'scheduled beat') this.beats.push(body.log as unknown as ScheduledBeatLog);
  }
}

/**
 * The Worker on a partitioned queue (issue 19, part 4), under miniflare (workerd, over
 * @upstash/redis and a REST bridge of this suite's own, which counts the requests): its scheduled
 * beat visits every partition, their first claims in one request.
 */
describe('the Worker on a partitioned queue', () => {
  let suite: ReportingSuite;
  let bridge: RunningBridge;
  let raw: Redis;
  let transport: IoredisTransport;
  const reports = new Reports();
  const made: string[] = [];

  beforeAll(async () => {
    const onReport = (body: unknown): void => reports.take(body);
    suite = await startReportingSuite({ entry: ENTRY, name: 'echomq-partition-test', redisUrl: inject('redisUrl'), bridgeToken: BRIDGE_TOKEN, emqToken: EMQ_TOKEN, onReport });
    ({ bridge, raw, transport } = suite);
  }, 60_000);
  afterAll(async () => {
    for (const name of made) {
      const keys = [...(await raw.keys(`emq:{${name}}:*`)), ...(await raw.keys(`emq:{${name}~*}:*`))];
      if (keys.length > 0) await raw.del(...keys);
      await raw.hdel(PARTITIONS_REGISTRY, name);
      await raw.srem('emq:queues', name);
    }
    await suite?.close();
  });

  async function startWorker(queue: string, plain: string, bindings: Record<string, string> = {}): Promise<MiniflareWorker> {
    made.push(queue, plain);
    return suite.startWorker({ PQ: queue, PLAIN: plain, PARTS: String(PARTITIONS), ...bindings });
  }

  async function scheduled(mf: Miniflare): Promise<void> {
    const worker = await mf.getWorker();
    await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
  }

  /** The queue names a scheduled beat log's drains served. */
  const served = (log: ScheduledBeatLog): string[] => log.summaries.flatMap((s) => ('queue' in s ? [s.queue] : []));

  it('an idle scheduled event costs one request over every partition and the plain queue', async () => {
    const name = queueName('pidle');
    const plain = queueName('plain');
    const { mf } = await startWorker(name, plain);
    try {
      await scheduled(mf); // warms the script cache: a cold first call may add an EVAL request
      bridge.reset();
      const before = reports.beats.length;
      await scheduled(mf);
      await scheduled(mf);
      expect(bridge.stats().requests).toBe(2);
      await until(() => reports.beats.length >= before + 2, 2_000);
      for (const log of reports.beats.slice(before)) {
        expect(log.firstRequests).toBe(1);
        expect(log.requests).toBe(1);
        // every partition visited, and the plain queue, each a drain of its own
        expect(served(log).sort()).toEqual([...Array.from({ length: PARTITIONS }, (_, i) => partitionName(name, i)), plain].sort());
      }
    } finally {
      await mf.dispose();
    }
  });

  it('runs every job of many groups once through cron beats, each group in order, the keyspace whole', async () => {
    const name = queueName('pjobs');
    const plain = queueName('plain');
    const queue = new PartitionedQueue<{ n: number }>(transport, name, { partitions: PARTITIONS });
    const groups = Array.from({ length: 12 }, (_, g) => `tenant-${g}`);
    // a group limit of 1: the group's next job starts after the last one's report arrived
    for (const group of groups) await queue.setGroupLimit(group, 1);
    const jobs = [
      ...groups.flatMap((group) => Array.from({ length: 6 }, (_, i) => ({ payload: { n: i }, group }))),
      ...Array.from({ length: 24 }, (_, i) => ({ payload: { n: 1000 + i } })),
    ];
    const added = await queue.addBulk(jobs);
    const touched = new Set(added.map((a) => a.id).map((id) => /~(\d+)$/.exec(id)?.[1]));
    expect(touched.size).toBe(PARTITIONS); // the round robin put work in every partition
    const { mf } = await startWorker(name, plain, { EMQ_BEAT_DEADLINE_MS: '3000', EMQ_JOB_TIMEOUT_MS: '1000', EMQ_DRAIN_ON_ENQUEUE_MS: '0' });
    try {
      const before = reports.beats.length;
      for (let event = 0; event < 20 && (await queue.counts()).completed < jobs.length; event++) await scheduled(mf);
      expect(await queue.counts()).toMatchObject({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: jobs.length });
      const runs = reports.runs.get(name) ?? [];
      // every job once
      expect(runs.map((r) => r.id).sort()).toEqual(added.map((a) => a.id).sort());
      // each group's jobs in the order they were enqueued
      for (const group of groups) expect(runs.filter((r) => r.group === group).map((r) => r.payload.n)).toEqual([0, 1, 2, 3, 4, 5]);
      // every partition's drain ran a beat, and each claimed some of the jobs
      await until(() => reports.beats.length > before, 2_000);
      const beats = reports.beats.slice(before);
      const claimedBy = new Map<string, number>();
      for (const log of beats) {
        expect(served(log)).toHaveLength(PARTITIONS + 1);
        for (const s of log.summaries) if ('queue' in s) claimedBy.set(s.queue, (claimedBy.get(s.queue) ?? 0) + s.claimed);
      }
      for (let i = 0; i < PARTITIONS; i++) expect(claimedBy.get(partitionName(name, i)), `partition ${i}`).toBeGreaterThan(0);
      expect(claimedBy.get(plain)).toBe(0);
      expect(await checkPartitionedQueue(raw, name)).toEqual([]);
    } finally {
      await mf.dispose();
    }
  });

  it('drains the partition a job enqueued through the API went to, without waiting for the cron', async () => {
    const name = queueName('papi');
    const plain = queueName('plain');
    // the queue exists, partitioned, before the API sees it
    const queue = new PartitionedQueue<{ n: number }>(transport, name, { partitions: PARTITIONS });
    await queue.add({ n: -1 }, { group: 'seed' });
    const { mf, url } = await startWorker(name, plain, { EMQ_DRAIN_ON_ENQUEUE_MS: '2000', EMQ_ACK_WITHIN_MS: '100' });
    try {
      await scheduled(mf); // runs the seed job
      const headers = { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' };
      const res = await fetch(`${url}/v1/queues/${name}/jobs`, { method: 'POST', headers, body: JSON.stringify({ payload: { n: 1 }, group: 'tenant-a' }) });
      const body = (await res.json()) as { id?: string; error?: { code: string } };
      expect(res.status).toBe(201);
      const group = queue.partitionOfGroup('tenant-a');
      expect(await group.getJob(body.id!)).not.toBeNull();
      await until(async () => (await queue.getJob(body.id!))?.state === 'completed', 5_000);
      expect((reports.runs.get(name) ?? []).map((r) => r.id)).toContain(body.id);
      // the drain after the enqueue ran the job's partition alone, not all eight
      // its log line is reported when the drain ends (after the completion rides or goes alone), not awaited
      await until(() => reports.logs.some((log) => log.msg === 'drain after enqueue'), 5_000);
      const drains = reports.logs.filter((log) => log.msg === 'drain after enqueue');
      const drained = new Set(drains.flatMap((log) => (log.summaries as Array<{ queue?: string }>).flatMap((s) => (s.queue === undefined ? [] : [s.queue]))));
      expect([...drained]).toEqual([group.name]);
      // a bulk enqueue over several partitions: the drain after it takes every one of them
      const bulk = await fetch(`${url}/v1/queues/${name}/jobs/bulk`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jobs: Array.from({ length: 16 }, (_, i) => ({ payload: { n: 100 + i }, group: `g-${i}` })) }),
      });
      expect(bulk.status).toBe(201);
      const ids = ((await bulk.json()) as { jobs: Array<{ id: string }> }).jobs.map((j) => j.id);
      await until(async () => (await queue.counts()).completed === 18, 5_000);
      const ran = new Set((reports.runs.get(name) ?? []).map((r) => r.id));
      for (const id of ids) expect(ran.has(id), id).toBe(true);
      await sleep(300); // the last completion rides or goes alone after EMQ_ACK_WITHIN_MS
      expect(await checkPartitionedQueue(raw, name)).toEqual([]);
    } finally {
      await mf.dispose();
    }
  });
});
