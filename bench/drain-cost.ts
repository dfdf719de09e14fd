/**
 * What one drained job costs each side: the Node consumer's CPU (process.cpuUsage, this process
 * holds nothing but the consumer while it drains) and Redis's (INFO cpu), in microseconds a job,
 * over a drain of `--jobs` no-op jobs by one Consumer of `--concurrency` slots on a private
 * redis-server. Where `npm run bench` times a drain against BullMQ's, this says which side bounds
 * it: on 2 cores a consumer whose Node side is busier than Redis gains nothing from a leaner
 * script. With `--profile FILE` it also writes a V8 CPU profile of the drain alone (the enqueue
 * before it left out), for Chrome's DevTools or any .cpuprofile reader.
 *
 *   npx tsx bench/drain-cost.ts [--concurrency 100] [--jobs 100000] [--groups 0] [--rounds 3] [--events] [--profile c100.cpuprofile]
 *
 * `--groups N` spreads the jobs over N groups, each limited to one active job, as the bench's groups cases.
 *
 * Prints one JSON line a round: jobs_per_s, node_us_per_job, node_busy (cores), redis_us_per_job.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { Consumer } from '../src/node/consumer/index.js';
import { IoredisTransport } from '../src/node/ioredis-transport.js';
import { startLocalRedis } from '../src/node/local-redis.js';
import { Queue } from '../src/queue/queue.js';
import { ECHO_QUEUE_OPTIONS } from './lib/impls.js';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '100' },
    jobs: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    groups: { type: 'string', default: '0' },
    events: { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
});
const concurrency = Number(values.concurrency);
const jobs = Number(values.jobs);
const rounds = Number(values.rounds);
const groups = Number(values.groups);

/** Redis's CPU so far, in seconds (user and system, as the bench's redis_us_per_job reads it). */
async function redisCpu(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function drainRound(url: string, admin: Redis, round: number, profile: Session | undefined): Promise<Record<string, number>> {
  const name = `bench-drain-cost-${round}`;
  const producer = IoredisTransport.connect(url);
  const queue = new Queue<{ i: number }>(producer, name, ECHO_QUEUE_OPTIONS);
  if (!values.events) await queue.setEvents({ maxLen: 0 });
  for (let g = 0; g < groups; g++) await queue.setGroupLimit(`g${g}`, 1);
  const groupOf = (i: number): { group?: string } => (groups > 0 ? { group: `g${i % groups}` } : {});
  for (let i = 0; i < jobs; i += 1000) await queue.addBulk(Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ payload: { i: i + j }, ...groupOf(i + j) })));
  await producer.close();

  const transport = IoredisTransport.connect(url);
  await transport.ping();
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const consumer = new Consumer(transport, new Queue<{ i: number }>(transport, name, ECHO_QUEUE_OPTIONS), () => {}, {
    concurrency,
    log: () => {},
    hooks: { onCompleted: () => void (++done === jobs && finished()) },
  });
  if (profile) await profile.post('Profiler.start');
  const redisBefore = await redisCpu(admin);
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  consumer.start();
  await all;
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpuBefore);
  const redisSeconds = (await redisCpu(admin)) - redisBefore;
  if (profile) writeFileSync(values.profile!, JSON.stringify((await profile.post('Profiler.stop')).profile));
  await consumer.stop();
  await transport.close();
  await admin.del(...(await admin.keys(`emq:{${name}}:*`)));
  const nodeUs = cpu.user + cpu.system;
  return {
    round,
    concurrency,
    groups,
    jobs,
    jobs_per_s: Math.round((jobs / ms) * 1000),
    node_us_per_job: Number((nodeUs / jobs).toFixed(2)),
    node_busy: Number((nodeUs / 1000 / ms).toFixed(2)),
    redis_us_per_job: Number(((redisSeconds * 1e6) / jobs).toFixed(2)),
  };
}

const redis = await startLocalRedis({ env: { PATH: process.env.PATH } });
const admin = new Redis(redis.url);
try {
  for (let round = 1; round <= rounds; round++) {
    // the profile, when asked for, covers the last round's drain
    let profile: Session | undefined;
    if (values.profile && round === rounds) {
      profile = new Session();
      profile.connect();
      await profile.post('Profiler.enable');
    }
    console.log(JSON.stringify({ case: 'drain-cost', ...(await drainRound(redis.url, admin, round, profile)), events: values.events }));
    profile?.disconnect();
  }
} finally {
  await admin.quit();
  await redis.stop();
}
