import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchContext, benchQueueName, type Figures, type Impl, redisCostPerJob, startMeter } from './context.js';
import { bullQueue, bullWorker, echoQueue, groupQueue, groupWorker } from './impls.js';
import { latch, round } from './stats.js';

/**
 * What a drain run does: `n` no-op jobs, in `groups` groups (0 = ungrouped), `concurrency` slots.
 * `events` false runs echomq with its events stream off (`setEvents({maxLen: 0})`, set before
 * the jobs are enqueued); left out, the queue's defaults (events on). BullMQ and groupmq run as
 * they always do (BullMQ writes its events stream in any case).
 */
export interface DrainSpec {
  readonly n: number;
  readonly groups: number;
  readonly concurrency: number;
  readonly events?: boolean;
  /**
   * echomq only: each job also names two concurrency keys, `org:<i mod orgs>` and `plan:<i mod 2>`,
   * with `org:*` limited to `orgLimit` running jobs and the plans unlimited (docs/guides/job-controls.md).
   */
  readonly keys?: { readonly orgs: number; readonly orgLimit: number };
}

const groupOf = (spec: DrainSpec, i: number): string | undefined => (spec.groups > 0 ? `g${i % spec.groups}` : undefined);

/**
 * Enqueues `n` no-op jobs (not measured), then starts a consumer and measures from its start (its
 * first claim) to the last completion: jobs_per_s, commands_per_job (INFO commandstats delta)
 * and round_trips_per_job. Grouped work gives echomq a limit of 1 per group, the rule groupmq
 * always applies (one active job per group, in order), so both do the same work.
 */
export async function drain(ctx: BenchContext, impl: Impl, spec: DrainSpec): Promise<Figures> {
  const name = benchQueueName(`drain-c${spec.concurrency}`);
  const done = latch<number>();
  let completed = 0;
  const onCompleted = (): void => {
    if (++completed === spec.n) done.resolve(performance.now());
  };

  let start: () => void;
  let stop: () => Promise<void>;
  let requests = (): number => 0;

  if (impl === 'echomq') {
    const producer = echoQueue(ctx, name);
    if (spec.events === false) await producer.queue.setEvents({ maxLen: 0 });
    for (let g = 0; g < spec.groups; g++) await producer.queue.setGroupLimit(`g${g}`, 1);
    const keyed = spec.keys;
    if (keyed) for (let o = 0; o < keyed.orgs; o++) await producer.queue.setKeyLimit(`org:${o}`, keyed.orgLimit);
    await producer.queue.addBulk(
      Array.from({ length: spec.n }, (_, i) => {
        const group = groupOf(spec, i);
        return { payload: { i }, ...(group ? { group } : {}), ...(keyed ? { keys: [`org:${i % keyed.orgs}`, `plan:${i % 2}`] } : {}) };
      }),
    );
    await producer.transport.close();
    const { transport, queue } = echoQueue(ctx, name);
    await transport.ping();
    const consumer = new Consumer(transport, queue, () => {}, {
      concurrency: spec.concurrency,
      hooks: { onCompleted, onError: (error) => console.error('echomq consumer error:', error) },
    });
    start = () => void consumer.start();
    stop = async () => {
      await consumer.stop();
      await transport.close();
    };
    requests = () => transport.requests;
  } else if (impl === 'bullmq') {
    const queue = bullQueue(ctx, name);
    for (let from = 0; from < spec.n; from += 1000) {
      const count = Math.min(1000, spec.n - from);
      await queue.addBulk(Array.from({ length: count }, (_, i) => ({ name: 'job', data: { i: from + i } })));
    }
    await queue.close();
    const worker = bullWorker(ctx, name, async () => {}, { concurrency: spec.concurrency });
    worker.on('completed', onCompleted);
    worker.on('error', (error) => console.error('bullmq worker error:', error));
    await worker.waitUntilReady();
    start = () => void worker.run();
    stop = () => worker.close();
  } else {
    const { redis, queue } = groupQueue(ctx, name);
    for (let from = 0; from < spec.n; from += 500) {
      const count = Math.min(500, spec.n - from);
      await Promise.all(
        Array.from({ length: count }, (_, i) => queue.add({ groupId: groupOf(spec, from + i) ?? 'all', data: { i: from + i } })),
      );
    }
    let worker: ReturnType<typeof groupWorker> | undefined;
    start = () => {
      worker = groupWorker(queue, async () => {}, spec.concurrency);
      worker.on('completed', onCompleted);
    };
    stop = async () => {
      await worker?.close();
      await queue.close();
      redis.disconnect();
    };
  }

  const requests0 = requests();
  const meter = await startMeter(ctx);
  const t0 = performance.now();
  start();
  const t1 = await done.promise;
  const m = await meter.stop();
  const trips = impl === 'echomq' ? requests() - requests0 : m.writes;
  await stop();
  return {
    n: spec.n,
    jobs_per_s: round(spec.n / ((t1 - t0) / 1000), 0),
    ...redisCostPerJob(m, spec.n),
    round_trips_per_job: round(trips / spec.n, 3),
  };
}
