/**
 * Instructions per job: what Redis executes for each of echomq's hot paths, counted exactly by
 * valgrind's callgrind on a private redis-server (bench/lib/callgrind.ts). Time per job on a
 * shared 2-core machine moves by 15% from run to run; this count by about 1% (compare whole runs:
 * a case run alone can differ by a few percent from the same case after the others), so it is
 * the figure to compare a script change by (run it before and after; the JSON lines carry the
 * commit). Needs valgrind and redis-server; without them it says so in one line and exits 2.
 *
 *   npm run bench:instructions
 *   npm run bench:instructions -- --case drain-c100
 *
 * Cases, each on a fresh queue with `keepCompletedMs: 0` as the bench's:
 *   enqueue-single      one add a call (the floor beside it: a no-op script with the same KEYS and ARGV)
 *   enqueue-bulk        addBulk of 100
 *   drain-c100          complete 100 and claim the next 100 in one call, 100 more held (as the
 *                       bench's c100 consumer prefetches), events off
 *   drain-c100-events   the same with events on
 *   drain-c50           complete 50 and claim 50 in one call, nothing more held, events off
 *   drain-c1            complete one and claim the next in one call, events off
 *   drain-groups        100 groups each limited to one active job, as the bench's groups cases:
 *                       complete 30 and claim 30 in one call, 30 more held, events on
 */
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { IoredisTransport } from '../src/node/ioredis-transport.js';
import { Leases } from '../src/lease/leases.js';
import { Queue } from '../src/queue/queue.js';
import { callgrindMissing, type CountedRedis, startCountedRedis } from './lib/callgrind.js';
import { enqueueCalls } from './lib/enqueue-calls.js';
import { ECHO_QUEUE_OPTIONS } from './lib/impls.js';
import { scripts } from '../src/generated/scripts.js';

interface Line {
  case: string;
  impl: 'echomq' | 'floor';
  jobs: number;
  instructions_per_job: number;
}

type Case = (redis: CountedRedis, name: string) => Promise<Line[]>;

const queueOf = (url: string, name: string): { queue: Queue<number>; close: () => Promise<void> } => {
  const transport = IoredisTransport.connect(url);
  return { queue: new Queue<number>(transport, name, ECHO_QUEUE_OPTIONS), close: () => transport.close() };
};

const perJob = (name: string, impl: Line['impl'], jobs: number, instructions: number): Line => ({
  case: name,
  impl,
  jobs,
  instructions_per_job: Math.round(instructions / jobs),
});

const enqueueSingle: Case = async (redis, name) => {
  const n = 300;
  const { queue, close } = queueOf(redis.url, name);
  await queue.add(-1); // registered, scripts loaded
  const echomq = await redis.count(async () => {
    for (let i = 0; i < n; i++) await queue.add(i);
  });
  await close();
  // the floor: the same calls' KEYS and ARGV to a script that returns at once
  const calls = await enqueueCalls(`${name}-floor`, Array.from({ length: n + 1 }, (_, i) => i - 1));
  const raw = new Redis(redis.url);
  const sha = (await raw.script('LOAD', 'return 0')) as string;
  await raw.call('evalsha', sha, calls[0]!.keys.length, ...calls[0]!.keys, ...calls[0]!.args);
  const floor = await redis.count(async () => {
    for (const c of calls.slice(1)) await raw.call('evalsha', sha, c.keys.length, ...c.keys, ...c.args);
  });
  await raw.quit();
  return [perJob('enqueue-single', 'echomq', n, echomq), perJob('enqueue-single', 'floor', n, floor)];
};

const enqueueBulk: Case = async (redis, name) => {
  const calls = 10;
  const { queue, close } = queueOf(redis.url, name);
  await queue.add(-1);
  const total = await redis.count(async () => {
    for (let c = 0; c < calls; c++) await queue.addBulk(Array.from({ length: 100 }, (_, i) => ({ payload: c * 100 + i })));
  });
  await close();
  return [perJob('enqueue-bulk', 'echomq', calls * 100, total)];
};

/**
 * Drains `n` jobs `batch` at a time, each call completing the oldest `batch` jobs held and claiming
 * as many, with `ahead` more held throughout: what a consumer of `batch` slots that prefetches
 * `ahead` sends (the bench's process-c100 consumer holds about 200 leases for its 100 slots).
 */
const drain =
  (label: string, n: number, batch: number, ahead: number, events: boolean, groups = 0): Case =>
  async (redis, name) => {
    const { queue, close } = queueOf(redis.url, name);
    if (!events) await queue.setEvents({ maxLen: 0 });
    // grouped as the bench's groups cases are: each group limited to one active job
    for (let g = 0; g < groups; g++) await queue.setGroupLimit(`g${g}`, 1);
    const groupOf = (i: number): { group?: string } => (groups > 0 ? { group: `g${i % groups}` } : {});
    for (let i = 0; i < n; i += 1000) await queue.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: i + j, ...groupOf(i + j) })));
    const leases = new Leases(queue);
    const held = (await leases.claim(batch + ahead, 30_000)).jobs;
    let jobs = 0;
    const total = await redis.count(async () => {
      while (held.length > 0) {
        const done = held.splice(0, batch);
        jobs += done.length;
        const reply = await leases.complete(done.map((j) => ({ id: j.id, token: j.token })), { claimN: batch, leaseMs: 30_000 });
        held.push(...(reply.claimed?.jobs ?? []));
      }
    });
    await close();
    return [perJob(label, 'echomq', jobs, total)];
  };

const CASES: Record<string, Case> = {
  'enqueue-single': enqueueSingle,
  'enqueue-bulk': enqueueBulk,
  'drain-c100': drain('drain-c100', 2000, 100, 100, false),
  'drain-c100-events': drain('drain-c100-events', 2000, 100, 100, true),
  'drain-c50': drain('drain-c50', 2000, 50, 0, false),
  'drain-c1': drain('drain-c1', 200, 1, 0, false),
  'drain-groups': drain('drain-groups', 2000, 30, 30, true, 100),
};

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const chosen: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--case' && args[i + 1]) chosen.push(...args[++i]!.split(','));
    else throw new Error(`unknown argument ${args[i]} (see bench/instructions.ts)`);
  }
  for (const c of chosen) if (!CASES[c]) throw new Error(`no case ${c}: one of ${Object.keys(CASES).join(', ')}`);
  const missing = callgrindMissing();
  if (missing) {
    console.error(`bench:instructions: ${missing}`);
    process.exit(2);
  }
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const redis = await startCountedRedis();
  try {
    // every script compiled before any count, as on a Redis that has served a queue before: a
    // script a case's window ran first was compiled in it (a drain's first complete: 4% of the
    // drain-c100 count), a cost of the server's first call, not of a job
    const loader = new Redis(redis.url);
    for (const script of Object.values(scripts)) await loader.script('LOAD', script.lua);
    await loader.quit();
    let k = 0;
    for (const [label, run] of Object.entries(CASES)) {
      if (chosen.length > 0 && !chosen.includes(label)) continue;
      for (const line of await run(redis, `bench-ir-${label}-${k++}`)) console.log(JSON.stringify({ ...line, commit }));
    }
  } finally {
    await redis.stop();
  }
}

await main();
