import { Redis } from 'ioredis';
import { Consumer, IoredisTransport } from '../../src/node/index.js';

/**
 * The parked consumer as a Bun program: test/platforms/bun.test.ts runs it with the `bun` binary
 * (`bun test/platforms/bun-consumer.ts`), one process per consumer, killed by its PID. It consumes
 * `QUEUE` on `REDIS_URL` with `CONCURRENCY` slots, `LEASE_MS` leases and a `BEAT_MS` beat, its
 * connections named `CONNECTION_NAME` (so the suite can see its BLPOP in CLIENT LIST). Its handler
 * records each run beside the queue's keys through a connection of its own: `<queue>:seen` counts
 * runs by job id, `<queue>:started` holds each attempt's `Date.now()` at the handler's first line
 * (`<id>:<attempt>`), `<queue>:peak` the most jobs seen running at once, by group (`*` for the
 * ungrouped ones) and in all (`all`). Then it sleeps `payload.sleepMs` (on the first attempt only:
 * `payload.sleepFirstMs`), throws while the attempt is at most `payload.failAttempts`, and returns
 * `{ ran: id, runtime }`. It prints `{"ready":...}` once started and `{"stopped":true}` once a
 * SIGTERM's stop has returned, then leaves the process to exit on its own.
 */
const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`bun-consumer needs ${name}`);
  return value;
};
const url = env('REDIS_URL');
const queue = env('QUEUE');
const connectionName = env('CONNECTION_NAME', `bun-${queue}`);
// process.versions.bun: Bun's version, absent under Node
const runtime = process.versions['bun'] ? `bun ${process.versions['bun']}` : `node ${process.version}`;

const seen = new Redis(url);
const running = new Map<string, number>();

interface Payload {
  readonly sleepMs?: number;
  readonly sleepFirstMs?: number;
  readonly failAttempts?: number;
}

/** Records that `key` now runs `now` at once, if that is the most yet. */
const PEAK = "if tonumber(ARGV[2]) > tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end return 0";
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const consumer = new Consumer<Payload | null>(
  IoredisTransport.connect(url, { connectionName }),
  queue,
  async (job) => {
    const startedAt = Date.now();
    const group = job.group ?? '*';
    for (const key of [group, 'all']) running.set(key, (running.get(key) ?? 0) + 1);
    try {
      await seen
        .multi()
        .hincrby(`${queue}:seen`, job.id, 1)
        .hset(`${queue}:started`, `${job.id}:${job.attempt}`, startedAt)
        .eval(PEAK, 1, `${queue}:peak`, group, running.get(group)!)
        .eval(PEAK, 1, `${queue}:peak`, 'all', running.get('all')!)
        .exec();
      const { sleepMs = 0, sleepFirstMs = 0, failAttempts = 0 } = job.payload ?? {};
      await sleep(sleepMs + (job.attempt === 1 ? sleepFirstMs : 0));
      if (job.attempt <= failAttempts) throw new Error(`asked to fail attempt ${job.attempt}`);
      return { ran: job.id, runtime };
    } finally {
      for (const key of [group, 'all']) running.set(key, running.get(key)! - 1);
    }
  },
  {
    concurrency: Number(env('CONCURRENCY', '1')),
    leaseMs: Number(env('LEASE_MS', '30000')),
    beatMs: Number(env('BEAT_MS', '10000')),
    ownsTransport: true,
    log: (line) => process.stderr.write(`${line}\n`),
  },
).start();

process.once('SIGTERM', () => {
  void consumer.stop().then(async () => {
    await seen.quit();
    process.stdout.write('{"stopped":true}\n');
  });
});
process.stdout.write(`${JSON.stringify({ ready: true, runtime, pid: process.pid })}\n`);
