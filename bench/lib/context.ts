import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { serverWork } from './redis-stats.js';
import { socketWrites } from './round-trips.js';
import { round } from './stats.js';

/**
 * The implementations a case runs for. `floor` is no queue: the least Redis and the client can do
 * for the case's unit of work on this machine right now (a no-op script call with echomq's
 * arguments, a bare LPUSH to a parked BLPOP), so echomq's figure reads as a ratio to the limit.
 * `workflows` is Cloudflare Workflows under `wrangler dev` (the `steps` case's anchor).
 */
export type Impl = 'echomq' | 'bullmq' | 'groupmq' | 'floor' | 'workflows';

/** Goals a case checks itself, by name: whether each holds (`rate-limit`'s `goals`). */
export type GoalChecks = Readonly<Record<string, boolean>>;

/** A case's figures, named as issue 6 names them (`jobs_per_s`, `p99_ms`, ...), and its own `goals` if it has some. */
export type Figures = Record<string, number | null | GoalChecks>;

/** What every case gets: where Redis is, how big to go, and the meters. */
export interface BenchContext {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The bench's own client (INFO, cleanup): its traffic is never counted. */
  readonly admin: Redis;
  /** Small sizes, so the whole run fits in a few minutes (true in a smoke run too). */
  readonly quick: boolean;
  /**
   * Token sizes (`--smoke`, what CI runs): every case once, to show that it still runs; its
   * figures are not results. Absent: false. A case that sizes nothing for it runs at `quick`'s.
   */
  readonly smoke?: boolean;
  /** Where case modules look for child-process scripts and what to run them with. */
  readonly benchDir: string;
}

/** One value per size of run (see BenchContext): `full`, `quick` and `smoke`. */
export interface Sizes<T> {
  readonly full: T;
  readonly quick: T;
  readonly smoke: T;
}

/**
 * The value for this run's size.
 *
 * @example
 * const n = sized(ctx, { full: 10_000, quick: 2_000, smoke: 100 });
 */
export const sized = <T>(ctx: BenchContext, sizes: Sizes<T>): T => (ctx.smoke ? sizes.smoke : ctx.quick ? sizes.quick : sizes.full);

/** One benchmark case: its name as the JSON carries it and how to run it for one implementation. */
export interface BenchCase {
  readonly name: string;
  readonly impls: readonly Impl[];
  /** A reason to skip the whole case in this checkout, or undefined to run it. */
  skip?(ctx: BenchContext): string | undefined;
  run(ctx: BenchContext, impl: Impl): Promise<Figures>;
}

/** A fresh queue name under the bench's prefixes (cleanup on a shared Redis relies on them). */
export const benchQueueName = (label: string): string => `bench-${label}-${randomBytes(4).toString('hex')}`;

/** Deltas over a measured window: Redis's work (commands, time in scripts, CPU) and socket writes. */
export interface Meter {
  stop(): Promise<Measured>;
}

/** What a measured window cost. */
export interface Measured {
  readonly commands: number;
  /** Microseconds inside scripts (EVALSHA's usec in INFO commandstats). */
  readonly scriptUs: number;
  /** Microseconds of Redis's CPU (INFO cpu, user + system). */
  readonly redisUs: number;
  readonly writes: number;
  readonly ms: number;
}

/** Starts a measured window. */
export async function startMeter(ctx: BenchContext): Promise<Meter> {
  const work0 = await serverWork(ctx.admin);
  const writes0 = socketWrites();
  const t0 = performance.now();
  return {
    async stop() {
      const ms = performance.now() - t0;
      const writes = socketWrites() - writes0;
      const work = await serverWork(ctx.admin);
      return { commands: work.commands - work0.commands, scriptUs: work.scriptUs - work0.scriptUs, redisUs: work.cpuUs - work0.cpuUs, writes, ms };
    },
  };
}

/**
 * A window's Redis cost per job: commands, microseconds of Redis CPU and of script time, and the
 * one Redis's ceiling at that CPU (jobs a second it could serve with a core to itself).
 *
 * @example
 * return { n, jobs_per_s, ...redisCostPerJob(await meter.stop(), n) };
 */
export function redisCostPerJob(m: Measured, jobs: number): Figures {
  const usPerJob = m.redisUs / jobs;
  return {
    commands_per_job: round(m.commands / jobs),
    redis_us_per_job: round(usPerJob),
    script_us_per_job: round(m.scriptUs / jobs),
    redis_ceiling_jobs_per_s: usPerJob > 0 ? round(1e6 / usPerJob, 0) : null,
  };
}
