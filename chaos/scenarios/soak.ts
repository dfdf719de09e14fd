import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { JobNotFoundError } from '../../src/errors.js';
import { FIXED_KEYS, keyspace, QUEUE_REGISTRY } from '../../src/keyspace.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { findRedisServer, freePort } from '../../src/node/local-redis.js';
import { type BulkJob, Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import type { SoakPayload } from '../children/soak-consumer.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';
import { DurableRedis } from '../lib/durable-redis.js';

const QUEUE = 'chaos-soak';
/** The children's records, in the run's shared Redis (see chaos/children/soak-consumer.ts). */
const TRACK = 'chaos:soak';
/** Completed rows expire this soon: the keyspace at rest holds no job. */
const KEEP_COMPLETED_MS = 2_000;
/**
 * The producer's idempotency keys live this long: far longer than its retries take (ioredis sends
 * an unanswered request again within a second of the restarted Redis answering), short enough
 * that the drain can wait them out and find no request key at rest.
 */
const IDEMPOTENCY_TTL_MS = 5_000;
/** Jobs waiting (pending and scheduled) the producer keeps topping up to: consumers never idle. */
const BACKLOG = 300;
const CONSUMERS = 4;
const WINDOW_MS = 5_000;
/**
 * The end's throughput below this fraction of the start's is a drop. Measured on this 2-core VM:
 * the calm windows' mean end/start was 0.96-1.08 in seven quick runs, 0.94 and 1.02 in two full
 * runs with other chaos runs sharing the cores (load average up to 4.5); 5 s windows with a kill
 * or a restart in them dipped to 0.55-0.65 of the start. 0.7 stays clear of the calm windows' noise
 * (means of 2 windows a side in quick mode, 6 in full) and still catches a run that slows as it ages.
 */
const THROUGHPUT_FLOOR = 0.7;
/**
 * Redis's `held` memory (see redisMemory) after the drain may exceed the baseline by this much and
 * still count as back. Measured: -158 to -18 B after quick runs (one restart), +1,514 and +2,263 B
 * after full ones (three restarts, the AOF rewritten); 500 job rows left behind on purpose measured
 * +68 KB (about 136 B each), so 32 KiB catches a few hundred leaked rows, or anything growing.
 */
const REDIS_MEMORY_SLACK = 32 * 1024;
/**
 * The long-lived consumer's V8 heap after a full GC may exceed its baseline by this much. Measured:
 * +0.24 to +0.35 MB after quick runs, +0.23 and +0.26 MB after full ones with ten times the jobs:
 * code and feedback for the fault paths first taken during the faults, flat over time. 2 MiB is 23 B a
 * job over the ~90,000 jobs a full run gives it. Its RSS is reported but not judged: it moved -12
 * to +23 MB between runs (V8 and malloc keep pages they freed), with the heap flat.
 */
const CONSUMER_HEAP_SLACK = 2 * 1024 * 1024;

/** The phases of the load, in ms. */
interface Plan {
  readonly warmupMs: number;
  readonly calmMs: number;
  readonly faultsMs: number;
  readonly settleMs: number;
  readonly killEveryMs: number;
  readonly restarts: number;
  readonly pauses: number;
  readonly drainMs: number;
}

const QUICK: Plan = { warmupMs: 5_000, calmMs: 10_000, faultsMs: 30_000, settleMs: 5_000, killEveryMs: 3_000, restarts: 1, pauses: 1, drainMs: 30_000 };
const FULL: Plan = { warmupMs: 10_000, calmMs: 30_000, faultsMs: 510_000, settleMs: 20_000, killEveryMs: 5_000, restarts: 3, pauses: 8, drainMs: 120_000 };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A number in [0, 1) fixed by (seed, n, salt): the job mix is a function of the job's number. */
function unit(seed: number, n: number, salt: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(n + 1, 0xc2b2ae35) ^ Math.imul(salt + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return ((h ^ (h >>> 15)) >>> 0) / 2 ** 32;
}

/**
 * Job `n` of the mix: 14% fail on purpose (4% once then retry after a backoff, 4% ask to run
 * later, 3% for good, 3% for good once and then reprocessed), 10% in two groups limited to 2, 30%
 * in six unlimited groups, 5% delayed, 5% with a priority; 10-70 ms of work.
 */
function soakJob(seed: number, n: number): BulkJob<SoakPayload> {
  const u = (salt: number): number => unit(seed, n, salt);
  const k = u(1);
  const kind = k < 0.04 ? 'retry' : k < 0.08 ? 'later' : k < 0.11 ? 'dead' : k < 0.14 ? 'revive' : undefined;
  const g = u(2);
  const group = g < 0.05 ? 'g0' : g < 0.1 ? 'g1' : g < 0.4 ? `t${Math.floor(u(3) * 6)}` : undefined;
  return {
    payload: { n, ms: 10 + Math.floor(u(4) * 60), ...(kind ? { kind } : {}) },
    backoff: 50,
    ...(group ? { group } : {}),
    ...(u(5) < 0.05 ? { delayMs: 200 + Math.floor(u(6) * 800) } : {}),
    ...(u(7) < 0.05 ? { priority: 1 + Math.floor(u(8) * 3) } : {}),
  };
}

/** How many runs a job of `kind` makes by design: a failure on purpose runs again. */
const designedRuns = (kind: SoakPayload['kind']): number => (kind === 'retry' || kind === 'later' || kind === 'revive' ? 2 : 1);

/** Keeps `BACKLOG` jobs waiting: single adds and bulk adds, each retried with its idempotency key. */
class Producer {
  /** Every acknowledged job: id -> (n, kind). */
  readonly acknowledged = new Map<string, { n: number; kind: SoakPayload['kind'] }>();
  singles = 0;
  bulks = 0;
  retries = 0;
  lastAddAt = 0;
  private next = 0;
  private stopped = false;
  private abandoned = false;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly queue: Queue<SoakPayload>,
    private readonly seed: number,
  ) {}

  start(): void {
    this.stopped = false;
    this.done = this.loop();
  }

  /** Stops after the adds in flight are acknowledged. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  /** Stops at once, the adds in flight given up: the run failed and Redis may be gone for good. */
  abandon(): void {
    this.stopped = true;
    this.abandoned = true;
    void this.done.catch(() => undefined);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const { pending, scheduled } = (await this.retrying(() => this.queue.stats())).counts;
      let want = BACKLOG - pending - scheduled;
      for (let i = 0; i < 3 && want > 0; i++, want--) await this.addOne();
      for (; want > 0; want -= 50) await this.addMany(Math.min(50, want));
      await sleep(20);
    }
  }

  private async addOne(): Promise<void> {
    const n = this.next++;
    const { payload, ...options } = soakJob(this.seed, n);
    const { id } = await this.retrying(() => this.queue.add(payload, { ...options, idempotencyKey: `s-${n}` }));
    this.acknowledged.set(id, { n, kind: payload.kind });
    this.singles++;
    this.lastAddAt = performance.now();
  }

  private async addMany(count: number): Promise<void> {
    const first = this.next;
    this.next += count;
    const jobs = Array.from({ length: count }, (_, i) => soakJob(this.seed, first + i));
    const results = await this.retrying(() => this.queue.addBulk(jobs, { idempotencyKey: `b-${first}` }));
    results.forEach(({ id }, i) => this.acknowledged.set(id, { n: first + i, kind: jobs[i]!.payload.kind }));
    this.bulks++;
    this.lastAddAt = performance.now();
  }

  private async retrying<T>(call: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await call();
      } catch (error) {
        if (this.abandoned) throw error;
        this.retries++;
        await sleep(50);
      }
    }
  }
}

/** Clears the dead letters every second: removes the jobs that fail for good, reprocesses the others. */
class Janitor {
  /** Dead jobs removed (a `dead` kind: they never complete). */
  readonly removed = new Set<string>();
  /** Removes whose reply was lost: removed or not, the sweep cannot tell. */
  readonly ambiguous = new Set<string>();
  reprocessed = 0;
  private stopped = false;
  private done: Promise<void> = Promise.resolve();

  constructor(private readonly queue: Queue<SoakPayload>) {}

  start(): void {
    this.stopped = false;
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        for (const job of await this.queue.listDead({ limit: 200 })) {
          if (job.payload.kind === 'dead') {
            try {
              await this.queue.remove(job.id);
              this.removed.add(job.id);
            } catch (error) {
              // a remove whose first reply was lost answers "no such job" when sent again
              if (error instanceof JobNotFoundError) this.removed.add(job.id);
              else this.ambiguous.add(job.id);
            }
          } else {
            await this.queue.reprocess(job.id);
            this.reprocessed++;
          }
        }
      } catch {
        // Redis restarting, or a reprocess sent again ("not dead"): the next sweep sees the truth
      }
      await sleep(1_000);
    }
  }
}

/** Memory a consumer reports after a full GC. */
interface ChildMemory {
  readonly rss: number;
  readonly heapUsed: number;
}

/** The consumers, each a child process (chaos/children/soak-consumer.ts) killed by its PID. */
class SoakConsumers {
  readonly children = new Set<ChildProcess>();
  kills = 0;
  /** Children that exited without being killed, and the last lines they wrote to stderr. */
  crashed = 0;
  readonly crashLog: string[] = [];
  private readonly killed = new Set<number>();
  private readonly samples = new Map<ChildProcess, Array<(memory: ChildMemory) => void>>();

  constructor(private readonly args: readonly string[]) {}

  async spawn(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(import.meta.dirname, '..', 'children', 'soak-consumer.ts'), ...this.args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.children.add(child);
    this.samples.set(child, []);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-2_000)));
    child.on('exit', () => {
      this.children.delete(child);
      if (child.pid !== undefined && !this.killed.has(child.pid)) {
        this.crashed++;
        this.crashLog.push(stderr);
      }
    });
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`a soak consumer exited (${String(code)}) before it was ready: ${stderr}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'ready') resolve();
        else if (line.startsWith('mem ')) this.samples.get(child)?.shift()?.(JSON.parse(line.slice(4)) as ChildMemory);
      });
    });
    return child;
  }

  /** SIGKILLs one consumer other than `spare`, chosen by `pick` in [0, 1), and starts another. */
  async killOneAndReplace(spare: ChildProcess, pick: number): Promise<void> {
    const others = [...this.children].filter((c) => c !== spare);
    const victim = others[Math.floor(pick * others.length)];
    if (victim?.pid === undefined) return;
    this.kill(victim.pid);
    this.kills++;
    await this.spawn();
  }

  /** The memory `child` holds after a full GC. */
  sample(child: ChildProcess): Promise<ChildMemory> {
    return new Promise((resolve) => {
      this.samples.get(child)!.push(resolve);
      child.stdin!.write('sample\n');
    });
  }

  killAll(): void {
    for (const child of this.children) if (child.pid !== undefined) this.kill(child.pid);
  }

  private kill(pid: number): void {
    this.killed.add(pid);
    process.kill(pid, 'SIGKILL');
  }
}

/** Redis's memory at one moment: used_memory, and the part of it a leak would grow. */
interface RedisMemory {
  readonly used: number;
  /** used_memory less the script cache, the clients' buffers and the completed index: the data, its dicts, and the server's own. */
  readonly held: number;
  /** What the completed index takes (MEMORY USAGE): left out of `held`, see redisMemory. */
  readonly completedIndex: number;
}

/**
 * Redis's memory, the median of five `INFO memory` reads 200 ms apart, with the slow log and the
 * per-command latency histograms emptied and the histograms off while it reads: both grow with
 * the kinds of commands run since the server started, not with the data (a histogram is some tens
 * of KB, and a restarted server has fewer of them). The script cache (bounded by the package's
 * scripts) and the clients' buffers (by the connections) are left out of `held`, and so is the
 * completed index: each complete trims its entries older than keepCompletedMs, so at rest it holds
 * the last 2 s of the drain's completions, some hundreds of entries (80 KB in a quick run) whose
 * number moved `held` by up to 50 KB either way between runs, more than the slack. That it stays
 * trimmed is judged on its own: `completed_index_stale`, its entries older than 30 s at rest.
 */
async function redisMemory(raw: Redis): Promise<RedisMemory> {
  await raw.call('CONFIG', 'SET', 'latency-tracking', 'no');
  await raw.call('SLOWLOG', 'RESET');
  await raw.call('CONFIG', 'RESETSTAT');
  await sleep(200);
  const reads: RedisMemory[] = [];
  for (let i = 0; i < 5; i++) {
    const info = await raw.info('memory');
    const field = (name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]);
    const used = field('used_memory');
    const completedIndex = Number((await raw.call('MEMORY', 'USAGE', keyspace(QUEUE).key('completed'))) ?? 0);
    reads.push({ used, held: used - field('used_memory_scripts') - field('mem_clients_normal') - completedIndex, completedIndex });
    await sleep(200);
  }
  await raw.call('CONFIG', 'SET', 'latency-tracking', 'yes');
  return reads.sort((a, b) => a.held - b.held)[2]!;
}

/** Every key of the database, by SCAN (which also deletes the expired keys it meets). */
async function allKeys(raw: Redis): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await raw.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/**
 * The events stream's length, then the stream deleted, before each read of Redis's memory: the
 * stream is capped by design (the checker holds it to its cap at every window), and between the
 * warm-up's few entries and its cap it grows by far more than a leak's slack, so both reads leave
 * it out and see the rest alike.
 */
async function setEventsAside(raw: Redis): Promise<number> {
  const key = keyspace(QUEUE).key('events');
  const length = await raw.xlen(key);
  await raw.del(key);
  return length;
}

/** The fixed keys that hold something only while work is in flight: at rest each must be gone. */
const EMPTY_AT_REST = ['pending', 'ring', 'active', 'scheduled', 'dead', 'gpaused', 'gactive'] as const;

/**
 * What a drained queue at rest should not hold, by kind: any key that is neither the registry nor
 * a fixed key of the queue (a job row, a lane, an arrivals list, a request record, a key of
 * another name), and any member of a fixed key that is empty when nothing waits or runs (a lease,
 * a ring entry, a group's active count, a dead letter, a paused group left paused).
 */
async function orphansAtRest(raw: Redis): Promise<Record<string, number>> {
  const ks = keyspace(QUEUE);
  const found: Record<string, number> = {};
  const add = (kind: string, count = 1): void => void (found[kind] = (found[kind] ?? 0) + count);
  for (const key of await allKeys(raw)) {
    if (key === QUEUE_REGISTRY) continue;
    // the last hour's counts per minute: history, not work, and it expires by itself
    if (key === `${ks.prefix}minutes`) continue;
    if (!key.startsWith(ks.prefix)) add('foreign key');
    else {
      const rest = key.slice(ks.prefix.length);
      if (!(FIXED_KEYS as readonly string[]).includes(rest)) add(/^(job|lane|fifo|req):/.test(rest) ? rest.split(':')[0]! : rest === 'fifo' ? 'fifo' : 'other');
    }
  }
  for (const name of EMPTY_AT_REST) {
    const key = ks.key(name);
    const type = await raw.type(key);
    // the active zset may keep one member that is no lease, scored +inf (lua/includes/active_skiplist.lua): its leases are below
    const zsize = (): Promise<number> => (name === 'active' ? raw.zcount(key, '-inf', '(+inf') : raw.zcard(key));
    const size =
      type === 'zset' ? await zsize() : type === 'list' ? await raw.llen(key) : type === 'set' ? await raw.scard(key) : type === 'hash' ? await raw.hlen(key) : 0;
    if (size > 0) add(name, size);
  }
  return found;
}

/**
 * The soak: ten minutes of mixed load (60 s in quick mode) against a redis-server of its own
 * (`appendonly yes`, `appendfsync always`). A producer keeps 300 jobs waiting (single and bulk
 * adds, groups with limits, delays, priorities, retries, failures that go dead and are removed or
 * reprocessed); four consumers in child processes run them, one of them SIGKILLed by its PID every
 * few seconds and replaced, the queue and a group paused and resumed, and redis-server SIGKILLed
 * and restarted on its files (once in quick mode, three times in full). Calm phases open and close
 * the load, so the first and last windows see the same load without faults: the end's throughput
 * must be at least 0.7 of the start's. Then production stops and the queue drains, and what a
 * leak would leave must be back where it was before the load (a baseline taken after a warm-up of
 * the same load, drained): Redis's memory (used_memory less the script cache and the clients'
 * buffers, the capped events stream set aside), the keyspace (nothing but the queue's fixed keys, the checker clean), and a long-lived
 * consumer's heap after a full GC. Every acknowledged job ends completed, or dead and removed.
 */
export const soak: Scenario = {
  name: 'soak',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const plan = ctx.quick ? QUICK : FULL;
    const started = performance.now();
    const binary = findRedisServer();
    if (!binary) throw new Error('redis-server not found');
    const redis = new DurableRedis(binary, await freePort(), 'always');
    await redis.start();
    const raw = new Redis(redis.url);
    raw.on('error', () => {}); // refused while redis-server restarts: expected
    const tracker = new Redis(ctx.redisUrl);
    const transport = IoredisTransport.connect(redis.url);
    const queue = new Queue<SoakPayload>(transport, QUEUE, { keepCompletedMs: KEEP_COMPLETED_MS, idempotencyTtlMs: IDEMPOTENCY_TTL_MS });
    const consumers = new SoakConsumers([redis.url, QUEUE, ctx.redisUrl, TRACK, String(KEEP_COMPLETED_MS)]);
    const producer = new Producer(queue, ctx.seed);
    const janitor = new Janitor(queue);
    let rng = ctx.seed >>> 0;
    const random = (): number => unit(ctx.seed, rng++, 99);
    let violations = 0;
    const check = async (): Promise<void> => {
      const found = await checkInvariants(raw, QUEUE);
      if (found.length > 0) console.log(`# soak: invariant violations: ${found.slice(0, 5).join('; ')}`);
      violations += found.length;
    };

    /** Stops producing, waits until nothing waits, runs or lies dead, then waits out the keys' TTLs. */
    const drain = async (): Promise<boolean> => {
      await producer.stop();
      const until = performance.now() + plan.drainMs;
      let drained = false;
      while (!drained && performance.now() < until) {
        await sleep(250);
        const c = (await queue.stats()).counts;
        drained = c.pending + c.scheduled + c.active + c.dead === 0;
      }
      await janitor.stop();
      // the last request keys and completed rows expire; SCAN then deletes them for good
      await sleep(Math.max(KEEP_COMPLETED_MS + 1_000, producer.lastAddAt + IDEMPOTENCY_TTL_MS + 500 - performance.now()));
      await allKeys(raw);
      return drained;
    };

    try {
      await tracker.del(`${TRACK}:runs`, `${TRACK}:ok`, `${TRACK}:died`);
      for (const g of ['g0', 'g1']) await queue.setGroupLimit(g, 2);
      const keeper = await consumers.spawn();
      await Promise.all(Array.from({ length: CONSUMERS - 1 }, () => consumers.spawn()));

      // warm-up: every script and code path once (a pause, a group pause), then a drained queue
      producer.start();
      janitor.start();
      await sleep(plan.warmupMs / 2);
      await queue.pause();
      await queue.pauseGroup('t1');
      await sleep(200);
      await queue.resume();
      await queue.resumeGroup('t1');
      await sleep(plan.warmupMs / 2);
      await drain();
      await check();
      const eventsBefore = await setEventsAside(raw);
      const memoryBefore = await redisMemory(raw);
      const keeperBefore = await consumers.sample(keeper);

      // the load: calm, faults, settle, calm; throughput read every window
      const loadStart = performance.now();
      const at = (ms: number): Promise<void> => sleep(loadStart + ms - performance.now());
      producer.start();
      janitor.start();
      const faultsFrom = plan.calmMs;
      const faultsTo = plan.calmMs + plan.faultsMs;
      const endFrom = faultsTo + plan.settleMs;
      const loadMs = endFrom + plan.calmMs;
      const windows: Array<{ from: number; rate: number }> = [];
      let faulted = false;
      const sampling = (async () => {
        let last = { t: performance.now(), completed: (await queue.stats()).counts.completed };
        for (let w = 1; w * WINDOW_MS <= loadMs && !faulted; w++) {
          await at(w * WINDOW_MS);
          const now = { t: performance.now(), completed: (await queue.stats()).counts.completed };
          windows.push({ from: (w - 1) * WINDOW_MS, rate: ((now.completed - last.completed) * 1000) / (now.t - last.t) });
          last = now;
          await check().catch(() => undefined); // a check while redis-server restarts
        }
      })();
      sampling.catch(() => undefined); // awaited below; a fault that throws first must not leave it unhandled
      const faults: Array<{ at: number; run: () => Promise<void> }> = [];
      for (let t = faultsFrom + plan.killEveryMs; t < faultsTo; t += plan.killEveryMs) {
        faults.push({ at: t, run: () => consumers.killOneAndReplace(keeper, random()) });
      }
      let restarts = 0;
      for (let i = 1; i <= plan.restarts; i++) {
        faults.push({
          at: faultsFrom + (plan.faultsMs * i) / (plan.restarts + 1) + plan.killEveryMs / 2,
          run: async () => {
            await redis.kill();
            restarts++;
            await sleep(300);
            await redis.start();
          },
        });
      }
      let pauses = 0;
      for (let i = 0; i < plan.pauses; i++) {
        faults.push({
          at: faultsFrom + (plan.faultsMs * (i + 0.25)) / plan.pauses,
          run: async () => {
            await queue.pause();
            await queue.pauseGroup('g0');
            pauses++;
            await sleep(1_000);
            await queue.resume();
            await queue.resumeGroup('g0');
          },
        });
      }
      try {
        for (const fault of faults.sort((a, b) => a.at - b.at)) {
          await at(fault.at);
          await fault.run();
        }
      } catch (error) {
        faulted = true;
        throw error;
      }
      await sampling;
      const drained = await drain();

      // at rest: the keyspace, the memory, the records
      await check();
      const orphans = await orphansAtRest(raw);
      const eventsAfter = await setEventsAside(raw);
      const memoryAfter = await redisMemory(raw);
      const [serverSeconds] = await raw.time();
      const staleIndex = await raw.zcount(keyspace(QUEUE).key('completed'), '-inf', `(${Number(serverSeconds) * 1000 - 30_000}`);
      const keeperAfter = await consumers.sample(keeper);
      const counts = (await queue.stats()).counts;
      const runs = await tracker.hgetall(`${TRACK}:runs`);
      const ok = new Set(Object.keys(await tracker.hgetall(`${TRACK}:ok`)));

      for (const log of consumers.crashLog) console.log(`# soak: a consumer exited on its own: ${log.trim().split('\n').slice(-3).join(' | ')}`);
      const acknowledged = producer.acknowledged;
      const expectedCompleted = [...acknowledged.values()].filter((j) => j.kind !== 'dead').length;
      const neverRan = [...acknowledged].filter(([id, j]) => j.kind !== 'dead' && !ok.has(id)).length;
      const deadKept = [...acknowledged].filter(([id, j]) => j.kind === 'dead' && !janitor.removed.has(id) && !janitor.ambiguous.has(id)).length;
      const perJob = new Map<string, number>();
      let twoHolders = 0;
      for (const [key, value] of Object.entries(runs)) {
        if (Number(value) > 1) twoHolders++;
        const id = key.split('|')[0]!;
        perJob.set(id, (perJob.get(id) ?? 0) + 1);
      }
      const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
      const start = mean(windows.filter((w) => w.from + WINDOW_MS <= plan.calmMs).map((w) => w.rate));
      const end = mean(windows.filter((w) => w.from >= endFrom).map((w) => w.rate));
      const round = (x: number, digits = 0): number => Math.round(x * 10 ** digits) / 10 ** digits;
      return {
        scenario: 'soak',
        jobs: acknowledged.size,
        faults: `${consumers.kills} consumer kills (one of ${CONSUMERS} every ${plan.killEveryMs / 1000} s), redis-server SIGKILLed and restarted ${restarts} time(s) (appendfsync always), queue and a group paused ${pauses} time(s)`,
        load_s: round(loadMs / 1000),
        single_adds: producer.singles,
        bulk_adds: producer.bulks,
        producer_retries: producer.retries,
        consumer_kills: consumers.kills,
        redis_restarts: restarts,
        consumers_crashed: consumers.crashed,
        completed: counts.completed,
        expected_completed: expectedCompleted,
        dead_removed: janitor.removed.size,
        removes_ambiguous: janitor.ambiguous.size,
        reprocessed: janitor.reprocessed,
        jobs_lost: deadKept + Math.max(neverRan, expectedCompleted - counts.completed),
        duplicate_jobs: [...perJob.keys()].filter((id) => !acknowledged.has(id)).length,
        // two holders of one attempt, or a job completed twice (the counter past the jobs)
        reruns_unexplained: twoHolders + Math.max(0, counts.completed - expectedCompleted),
        rerun_after_kill: [...perJob].filter(([id, c]) => c > designedRuns(acknowledged.get(id)?.kind)).length,
        not_finished: drained ? 0 : counts.pending + counts.scheduled + counts.active + counts.dead,
        invariant_violations: violations,
        orphans: Object.values(orphans).reduce((s, c) => s + c, 0),
        ...(Object.keys(orphans).length > 0 ? { orphan_kinds: orphans } : {}),
        throughput_start: round(start),
        throughput_end: round(end),
        throughput_end_over_start: round(end / start, 3),
        throughput_dropped: end < THROUGHPUT_FLOOR * start ? 1 : 0,
        throughput_windows: Object.fromEntries(windows.map((w) => [String(w.from / 1000), round(w.rate)])),
        events_entries_before: eventsBefore,
        events_entries_after: eventsAfter,
        redis_used_memory_before: memoryBefore.used,
        redis_used_memory_after: memoryAfter.used,
        redis_held_before: memoryBefore.held,
        redis_held_after: memoryAfter.held,
        redis_memory_over_baseline_bytes: memoryAfter.held - memoryBefore.held,
        redis_memory_not_back: memoryAfter.held - memoryBefore.held > REDIS_MEMORY_SLACK ? 1 : 0,
        completed_index_bytes_before: memoryBefore.completedIndex,
        completed_index_bytes_after: memoryAfter.completedIndex,
        completed_index_stale: staleIndex,
        consumer_rss_before: keeperBefore.rss,
        consumer_rss_after: keeperAfter.rss,
        consumer_heap_before: keeperBefore.heapUsed,
        consumer_heap_after: keeperAfter.heapUsed,
        consumer_memory_not_back: keeperAfter.heapUsed - keeperBefore.heapUsed > CONSUMER_HEAP_SLACK ? 1 : 0,
        duration_s: round((performance.now() - started) / 1000, 1),
      };
    } finally {
      producer.abandon();
      void janitor.stop();
      consumers.killAll();
      await tracker.del(`${TRACK}:runs`, `${TRACK}:ok`, `${TRACK}:died`).catch(() => undefined);
      tracker.disconnect();
      raw.disconnect();
      await transport.close();
      await redis.stop();
    }
  },
};
