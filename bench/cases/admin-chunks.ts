import type { Redis } from 'ioredis';
import { Leases } from '../../src/lease/leases.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import type { Reply, ScriptCall, Transport } from '../../src/transport.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { round } from '../lib/stats.js';

/**
 * `admin-chunks`: how long one chunk of a bulk admin operation holds Redis. Each of drain,
 * reprocessDead, clean (dead, completed) and obliterate runs over a queue of N rows (200,000;
 * 20,000 with --quick), one script call per chunk (500 rows, 250 for reprocessDead). Figures per operation:
 * `_rows` it touched, `_chunks` (script calls), `_server_avg_ms` Redis's time per call (INFO
 * commandstats: the usec of EVALSHA and EVAL over their calls), `_server_max_ms` the longest call
 * by SLOWLOG (its threshold at 500 us for the window, since Redis 7 logs the commands inside a
 * script too; a Redis of yours may refuse the CONFIG: then null), `_max_ms` the longest call's
 * round trip as this process times it (a script runs atomically, so it bounds how long one call
 * held Redis, plus the trip and this process's own delays), and `_s` the whole operation.
 */
export const adminChunks: BenchCase = {
  name: 'admin-chunks',
  impls: ['echomq'],
  async run(ctx: BenchContext, _impl: Impl): Promise<Figures> {
    const n = sized(ctx, { full: 200_000, quick: 20_000, smoke: 2_000 });
    const transport = new TimingTransport(IoredisTransport.connect(ctx.url));
    const queue = new Queue<number>(transport, benchQueueName('admin'), { keepCompletedMs: -1 });
    const leases = new Leases(queue);
    /** `count` jobs, half of them in 100 groups, the first `delayed` an hour away. */
    const enqueue = async (count: number, delayed = 0): Promise<void> => {
      for (let i = 0; i < count; i += 1000) {
        await queue.addBulk(
          Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({
            payload: i + j,
            maxAttempts: 1,
            ...((i + j) % 2 === 0 ? { group: `g${(i + j) % 100}` } : {}),
            ...(i + j < delayed ? { delayMs: 3_600_000 } : {}),
          })),
        );
      }
    };
    /** Claims every claimable job in batches of 1000 and settles each batch with `settle`. */
    const settleAll = async (settle: (jobs: Array<{ id: string; token: number }>) => Promise<unknown>): Promise<void> => {
      for (;;) {
        const { jobs } = await leases.claim(1000, 600_000);
        if (jobs.length === 0) return;
        await settle(jobs);
      }
    };
    const bury = () => settleAll((jobs) => leases.fail(jobs.map(({ id, token }) => ({ id, token, error: 'bench' }))));
    const figures: Figures = { rows: n };
    const measure = async (label: string, work: () => Promise<number | string[] | boolean>): Promise<void> => {
      const log = await SlowLog.open(ctx.admin);
      const stats0 = await scriptStats(ctx.admin);
      transport.calls.length = 0;
      const t = performance.now();
      const done = await work();
      const wall = (performance.now() - t) / 1000;
      const calls = [...transport.calls];
      const stats1 = await scriptStats(ctx.admin);
      figures[`${label}_rows`] = typeof done === 'number' ? done : Array.isArray(done) ? done.length : null;
      figures[`${label}_chunks`] = calls.length;
      figures[`${label}_server_avg_ms`] = round((stats1.usec - stats0.usec) / 1000 / Math.max(1, stats1.calls - stats0.calls), 3);
      figures[`${label}_server_max_ms`] = round(await log.close());
      figures[`${label}_max_ms`] = round(Math.max(...calls));
      figures[`${label}_s`] = round(wall);
    };
    try {
      await enqueue(n, n / 4);
      await measure('drain', () => queue.drain());
      await enqueue(n);
      await bury();
      await measure('reprocess_dead', () => queue.reprocessDead());
      await bury();
      await measure('clean_dead', () => queue.clean('dead'));
      await enqueue(n);
      await settleAll((jobs) => leases.complete(jobs));
      await measure('clean_completed', () => queue.clean('completed'));
      await enqueue(n, n / 4);
      await measure('obliterate', async () => {
        await queue.obliterate();
        return n;
      });
    } finally {
      await transport.close();
    }
    return figures;
  },
};

/** Script calls (EVALSHA and EVAL) Redis has run and their time in us, from INFO commandstats. */
async function scriptStats(admin: Redis): Promise<{ calls: number; usec: number }> {
  const info = await admin.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const [, , c, u] of info.matchAll(/cmdstat_(evalsha|eval):calls=(\d+),usec=(\d+)/g)) {
    calls += Number(c);
    usec += Number(u);
  }
  return { calls, usec };
}

/** A transport that times each request (ms, this process's clock) into `calls`. */
class TimingTransport implements Transport {
  readonly calls: number[] = [];

  constructor(private readonly inner: Transport) {}

  evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.timed(() => this.inner.evalsha(calls));
  }

  eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.timed(() => this.inner.eval(calls));
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async timed<T>(send: () => Promise<T>): Promise<T> {
    const t = performance.now();
    const reply = await send();
    this.calls.push(performance.now() - t);
    return reply;
  }
}

/** A window of SLOWLOG: the longest EVAL or EVALSHA of the window, by Redis's own clock. */
class SlowLog {
  private constructor(
    private readonly admin: Redis,
    private readonly saved: [string, string] | null,
  ) {}

  static async open(admin: Redis): Promise<SlowLog> {
    try {
      const threshold = ((await admin.config('GET', 'slowlog-log-slower-than')) as string[])[1]!;
      const length = ((await admin.config('GET', 'slowlog-max-len')) as string[])[1]!;
      await admin.config('SET', 'slowlog-max-len', '10000');
      await admin.config('SET', 'slowlog-log-slower-than', '500');
      await admin.slowlog('RESET');
      return new SlowLog(admin, [threshold, length]);
    } catch {
      return new SlowLog(admin, null);
    }
  }

  /** The longest script call of the window in ms (0 when none took 500 us), or null without CONFIG. */
  async close(): Promise<number | null> {
    if (!this.saved) return null;
    const entries = (await this.admin.slowlog('GET', '10000')) as Array<[number, number, number, string[]]>;
    await this.admin.config('SET', 'slowlog-log-slower-than', this.saved[0]);
    await this.admin.config('SET', 'slowlog-max-len', this.saved[1]);
    const scripts = entries.filter(([, , , [command]]) => /^eval(sha)?$/i.test(command ?? ''));
    return Math.max(0, ...scripts.map(([, , micros]) => micros / 1000));
  }
}
