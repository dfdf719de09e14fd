import { Queue as BullQueue, Worker as BullWorker } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { InvalidArgumentError } from '../../src/errors.js';
import type { Handler } from '../../src/handler.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { Queue } from '../../src/queue/queue.js';
import { Consumer, type ConsumerOptions } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type LocalCluster, startLocalCluster } from '../../src/node/local-cluster.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { ECHO_QUEUE_OPTIONS } from '../lib/impls.js';
import { latch, round } from '../lib/stats.js';

/** The workload, the same on every variant: `queues` queues of `jobsPerQueue` no-op jobs, one consumer per queue. */
export interface ClusterSpec {
  readonly queues: number;
  readonly jobsPerQueue: number;
  /** Slots of each queue's consumer (echomq) or Worker (BullMQ). */
  readonly concurrency: number;
  /** Jobs per addBulk call; each queue's calls go one after another, the queues side by side. */
  readonly bulk: number;
  /** How long the enqueue or the drain may take before the case fails, ms. */
  readonly timeoutMs: number;
}

/** Issue 19's case: 8 queues x 5,000 jobs, concurrency 10 per queue. */
export const CLUSTER_FULL: ClusterSpec = { queues: 8, jobsPerQueue: 5_000, concurrency: 10, bulk: 1_000, timeoutMs: 120_000 };
/** --quick: 8 queues x 250 jobs. */
export const CLUSTER_QUICK: ClusterSpec = { ...CLUSTER_FULL, jobsPerQueue: 250, timeoutMs: 60_000 };
/** --smoke: 8 queues x 20 jobs. */
export const CLUSTER_SMOKE: ClusterSpec = { ...CLUSTER_FULL, jobsPerQueue: 20, bulk: 10, timeoutMs: 30_000 };

/** A master to meter: where it is. */
interface Master {
  readonly host: string;
  readonly port: number;
}

/**
 * A Redis a variant runs on: the bench's one Redis, or the case's local cluster. Each says how
 * echomq and BullMQ connect to it and which masters serve it (all of them metered).
 */
export interface Deployment {
  readonly kind: 'one' | 'cluster';
  readonly masters: readonly Master[];
  /** A new echomq transport (closed by its user). */
  transport(): IoredisTransport;
  /**
   * BullMQ's connection and prefix. On a cluster a BullMQ queue's keys must share a slot, and
   * its hash tag is the prefix (`{bull}`): every BullMQ queue then lives on one master.
   */
  bull(): { connection: Redis | Cluster; prefix: string | undefined };
}

/**
 * One variant's workload, made: enqueue every job, then make the consumers and connect them
 * (`prepare`, outside the measured window), then start them; stop closes all.
 */
export interface Workload {
  enqueue(): Promise<void>;
  prepare(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * How a variant makes the workload's queues for one implementation (undefined: the
 * implementation has no such variant, and its figures are left out). `onCompleted` is called once
 * per completed job. The lead's "partitioned (8)" goes in as another maker.
 */
export type WorkloadMaker = (impl: Impl, on: Deployment, spec: ClusterSpec, tag: string, onCompleted: () => void) => Workload | undefined;

/** A variant of the case: the prefix of its figures, where it runs and how its queues are made. */
export interface Variant {
  readonly name: string;
  readonly on: 'one' | 'cluster';
  readonly make: WorkloadMaker;
}

const noop = (): void => {};

/**
 * `spec.queues` plain queues (`<tag>-q0`, `-q1`, ...), each filled by `addBulk` and drained by a
 * consumer of its own. echomq: one producer transport for every queue, one transport per
 * consumer. BullMQ: one connection (a cluster client on a cluster) shared by its Queues, a
 * Worker per queue on its own; on a cluster every name gets the `{bull}` prefix.
 */
export const plainQueues: WorkloadMaker = (impl, on, spec, tag, onCompleted) => {
  const names = Array.from({ length: spec.queues }, (_, i) => `${tag}-q${i}`);
  const fill = async (add: (name: string, from: number, count: number) => Promise<unknown>): Promise<void> => {
    await Promise.all(
      names.map(async (name) => {
        for (let from = 0; from < spec.jobsPerQueue; from += spec.bulk) await add(name, from, Math.min(spec.bulk, spec.jobsPerQueue - from));
      }),
    );
  };
  if (impl === 'echomq') {
    const producer = on.transport();
    const queues = new Map(names.map((name) => [name, new Queue<{ i: number }>(producer, name, ECHO_QUEUE_OPTIONS)]));
    const consumers: Array<Consumer<{ i: number }>> = [];
    const transports: IoredisTransport[] = [producer];
    return {
      enqueue: () => fill((name, from, count) => queues.get(name)!.addBulk(Array.from({ length: count }, (_, i) => ({ payload: { i: from + i } })))),
      async prepare() {
        const onError = (error: unknown): void => console.error('cluster echomq consumer error:', error);
        for (const name of names) {
          const transport = on.transport();
          transports.push(transport);
          await transport.ping();
          const queue = new Queue<{ i: number }>(transport, name, ECHO_QUEUE_OPTIONS);
          consumers.push(new Consumer(transport, queue, noop, { concurrency: spec.concurrency, hooks: { onCompleted, onError } }));
        }
      },
      start() {
        for (const consumer of consumers) consumer.start();
      },
      async stop() {
        await Promise.all(consumers.map((c) => c.stop()));
        await Promise.all(transports.map((t) => t.close()));
      },
    };
  }
  if (impl === 'bullmq') {
    const { connection, prefix } = on.bull();
    const opts = { connection, ...(prefix ? { prefix } : {}) };
    const queues = new Map(names.map((name) => [name, new BullQueue(name, opts)]));
    const workers: BullWorker[] = [];
    return {
      enqueue: () =>
        fill((name, from, count) => queues.get(name)!.addBulk(Array.from({ length: count }, (_, i) => ({ name: 'job', data: { i: from + i } })))),
      async prepare() {
        for (const name of names) {
          const worker = new BullWorker(name, async () => {}, { ...opts, autorun: false, concurrency: spec.concurrency, removeOnComplete: { count: 0 } });
          worker.on('completed', onCompleted);
          worker.on('error', (error) => console.error('cluster bullmq worker error:', error));
          workers.push(worker);
          await worker.waitUntilReady();
        }
      },
      start() {
        for (const worker of workers) void worker.run();
      },
      async stop() {
        await Promise.all(workers.map((w) => w.close()));
        await Promise.all([...queues.values()].map((q) => q.close()));
        connection.disconnect();
      },
    };
  }
  return undefined;
};

/** A variant this tree cannot run (its figures are left null, the reason on stderr): the other variants still run. */
export class UnsupportedVariant extends Error {}

/** The partitions of the partitioned variants' one queue. */
export const PARTITIONS = 8;

/**
 * A Consumer over a PartitionedQueue, as `Consumer` takes one once it claims across partitions
 * (one loop per partition, `concurrency` the consumer's; docs/design.md, "Partitioned queues"). A
 * Consumer that does not refuses it with InvalidArgumentError: the variant then fails saying so.
 */
const PartitionedConsumer = Consumer as unknown as new <P>(
  transport: IoredisTransport,
  queue: PartitionedQueue<P>,
  handler: Handler<P>,
  options: ConsumerOptions<P>,
) => Consumer<P>;

/**
 * ONE queue of PARTITIONS partitions (`<tag>-p`), the plain variant's jobs all in it
 * (`spec.queues` x `spec.jobsPerQueue`, ungrouped: they go round robin over the partitions),
 * filled as the plain variant fills its queues, `spec.queues` producers side by side, each
 * `addBulk` split over the partitions (one script per partition per call); drained by ONE
 * Consumer over the PartitionedQueue with the plain variant's slots in total (`spec.queues` x
 * `spec.concurrency`), on one transport (one connection per master, and one subscriber per master
 * for the partitions' bells). echomq only: BullMQ has no partitioned queue.
 */
export const partitionedQueue: WorkloadMaker = (impl, on, spec, tag, onCompleted) => {
  if (impl !== 'echomq') return undefined;
  const name = `${tag}-p`;
  const options = { ...ECHO_QUEUE_OPTIONS, partitions: PARTITIONS };
  const producer = on.transport();
  const queue = new PartitionedQueue<{ i: number }>(producer, name, options);
  const transports: IoredisTransport[] = [producer];
  let consumer: Consumer<{ i: number }> | undefined;
  return {
    async enqueue() {
      await Promise.all(
        Array.from({ length: spec.queues }, async (_, stream) => {
          for (let from = 0; from < spec.jobsPerQueue; from += spec.bulk) {
            const count = Math.min(spec.bulk, spec.jobsPerQueue - from);
            await queue.addBulk(Array.from({ length: count }, (_, i) => ({ payload: { i: stream * spec.jobsPerQueue + from + i } })));
          }
        }),
      );
    },
    async prepare() {
      const onError = (error: unknown): void => console.error('cluster echomq partitioned consumer error:', error);
      const transport = on.transport();
      transports.push(transport);
      await transport.ping();
      const own = new PartitionedQueue<{ i: number }>(transport, name, options);
      try {
        consumer = new PartitionedConsumer(transport, own, noop, { concurrency: spec.queues * spec.concurrency, hooks: { onCompleted, onError } });
      } catch (error) {
        if (!(error instanceof InvalidArgumentError)) throw error;
        throw new UnsupportedVariant(`cluster: the partitioned variants need a Consumer that takes a PartitionedQueue, and this one refuses it (${error.message.slice(0, 60)}...)`);
      }
    },
    start() {
      consumer?.start();
    },
    async stop() {
      await consumer?.stop();
      await Promise.all(transports.map((t) => t.close()));
    },
  };
};

/**
 * The variants a run measures, in order (the cluster ones after `one`: their model reads its
 * figures): 8 queues on one Redis and on the cluster, then one queue of 8 partitions on each.
 */
export const VARIANTS: readonly Variant[] = [
  { name: 'one', on: 'one', make: plainQueues },
  { name: 'cluster', on: 'cluster', make: plainQueues },
  { name: 'partitioned8_one', on: 'one', make: partitionedQueue },
  { name: 'partitioned8', on: 'cluster', make: partitionedQueue },
];

/** A node's counters: commands run (INFO commandstats, the meter's own INFO left out) and CPU seconds (INFO cpu, sys + user). */
interface NodeSample {
  readonly commands: number;
  readonly cpuS: number;
}

/** Commands and CPU of each master, read over plain connections of its own. */
class NodeMeter {
  private constructor(
    private readonly admins: readonly Redis[],
    private readonly owned: boolean,
  ) {}

  static of(ctx: BenchContext, on: Deployment): NodeMeter {
    if (on.kind === 'one') return new NodeMeter([ctx.admin], false);
    return new NodeMeter(on.masters.map((m) => new Redis({ host: m.host, port: m.port })), true);
  }

  async sample(): Promise<NodeSample[]> {
    return Promise.all(
      this.admins.map(async (admin) => {
        const info = await admin.info('all');
        let commands = 0;
        // CLUSTER is the cluster clients' slot map refreshes, INFO and CONFIG the meters'
        for (const [, name, calls] of info.matchAll(/cmdstat_([\w|-]+):calls=(\d+)/g)) {
          if (name !== 'info' && name !== 'config' && name !== 'cluster') commands += Number(calls);
        }
        const cpu = (field: string): number => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
        return { commands, cpuS: cpu('used_cpu_sys') + cpu('used_cpu_user') };
      }),
    );
  }

  close(): void {
    if (this.owned) for (const admin of this.admins) admin.disconnect();
  }
}

/** Over one window (the enqueue or the drain): every master's commands and CPU, the wall time, this process's CPU. */
interface Window {
  readonly jobs: number;
  readonly ms: number;
  readonly nodeCpuS: number;
  readonly masters: ReadonlyArray<NodeSample>;
}

async function measure(meter: NodeMeter, jobs: number, run: () => Promise<unknown>): Promise<Window> {
  const before = await meter.sample();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const after = await meter.sample();
  return {
    jobs,
    ms,
    nodeCpuS: (cpu.user + cpu.system) / 1e6,
    masters: after.map((a, i) => ({ commands: a.commands - before[i]!.commands, cpuS: a.cpuS - before[i]!.cpuS })),
  };
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`cluster: ${what} did not finish within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A window's figures under `prefix`: jobs/s; Redis commands and CPU (us, every master summed) per
 * job; the busiest master's CPU over the wall time (`redis_busy`: 1 is a core); this process's CPU
 * over the wall time (`node_busy`) and per job; with several masters, each one's share of the commands,
 * largest first (`share_m1`, ...), and the busiest's share of the CPU.
 */
function windowFigures(prefix: string, w: Window): Figures {
  const commands = w.masters.reduce((s, m) => s + m.commands, 0);
  const cpuS = w.masters.reduce((s, m) => s + m.cpuS, 0);
  const maxCpuS = Math.max(...w.masters.map((m) => m.cpuS));
  const figures: Figures = {
    [`${prefix}jobs_per_s`]: round(w.jobs / (w.ms / 1000), 0),
    [`${prefix}commands_per_job`]: round(commands / w.jobs),
    [`${prefix}redis_us_per_job`]: round((cpuS * 1e6) / w.jobs),
    [`${prefix}redis_busy`]: round(maxCpuS / (w.ms / 1000)),
    [`${prefix}node_busy`]: round(w.nodeCpuS / (w.ms / 1000)),
    [`${prefix}node_us_per_job`]: round((w.nodeCpuS * 1e6) / w.jobs),
  };
  if (w.masters.length > 1) {
    const shares = w.masters.map((m) => m.commands / commands).sort((a, b) => b - a);
    shares.forEach((share, i) => (figures[`${prefix}share_m${i + 1}`] = round(share, 3)));
    figures[`${prefix}cpu_share_max`] = round(maxCpuS / cpuS, 3);
    figures[`${prefix}max_master_us_per_job`] = round((maxCpuS * 1e6) / w.jobs);
  }
  return figures;
}

/**
 * Runs one variant's workload: enqueue every job (measured), then start the consumers and
 * measure from their start to the last completion. Figures are the enqueue's (`enqueue_...`) and
 * the drain's, under the variant's name.
 */
async function runVariant(ctx: BenchContext, impl: Impl, variant: Variant, on: Deployment, spec: ClusterSpec): Promise<Figures | undefined> {
  const total = spec.queues * spec.jobsPerQueue;
  let completed = 0;
  const done = latch<void>();
  const workload = variant.make(impl, on, spec, benchQueueName(`cluster-${variant.name}`), () => {
    if (++completed === total) done.resolve();
  });
  if (!workload) return undefined;
  const meter = NodeMeter.of(ctx, on);
  try {
    const enqueue = await measure(meter, total, () => within(workload.enqueue(), spec.timeoutMs, `${impl} ${variant.name} enqueue`));
    await workload.prepare();
    const drain = await measure(meter, total, () => {
      workload.start();
      return within(done.promise, spec.timeoutMs, `${impl} ${variant.name} drain (${completed} of ${total} completed)`);
    });
    return { ...windowFigures(`${variant.name}_enqueue_`, enqueue), ...windowFigures(`${variant.name}_`, drain) };
  } finally {
    await workload.stop();
    meter.close();
  }
}

/**
 * The model, for a cluster variant beside `one`: with each master on a host of its own and Redis
 * the bottleneck, the drain would run at one Redis's figure over the busiest master's share of
 * the commands (`model_scale` = 1 / share_m1). Checked two ways: the one Redis's own ceiling,
 * jobs per second of its CPU (`one_redis_ceiling_jobs_per_s`, what the one Redis did if it was
 * busy all along: `one_redis_busy` near 1), and the same model on CPU rather than commands
 * (`cpu_model_scale`: the one Redis's CPU per job over the busiest master's).
 */
function modelFigures(name: string, figures: Figures): Figures {
  const n = (key: string): number | undefined => (typeof figures[key] === 'number' ? (figures[key] as number) : undefined);
  const share = n(`${name}_share_m1`);
  const oneJobs = n('one_jobs_per_s');
  const oneUs = n('one_redis_us_per_job');
  const maxUs = n(`${name}_max_master_us_per_job`);
  const out: Figures = {};
  if (share) {
    out[`${name}_model_scale`] = round(1 / share);
    if (oneJobs) out[`${name}_model_jobs_per_s`] = round(oneJobs / share, 0);
    if (oneUs) out[`${name}_model_ceiling_jobs_per_s`] = round(1e6 / oneUs / share, 0);
  }
  if (oneUs && maxUs) out[`${name}_cpu_model_scale`] = round(oneUs / maxUs);
  return out;
}

/**
 * Runs every variant of `variants` for one implementation: the one-Redis ones on the bench's
 * Redis, the cluster ones on a local cluster of three masters and no replicas the case starts and
 * stops. No replicas: the one Redis it is compared with has none, and on this 2-core machine a
 * replica's work (applying every write its master makes) would take CPU from the masters; what
 * replication costs is `durability: 'replicated'`'s to measure.
 */
export async function measureCluster(ctx: BenchContext, impl: Impl, spec: ClusterSpec, variants: readonly Variant[] = VARIANTS): Promise<Figures> {
  let local: LocalCluster | undefined;
  const figures: Figures = { jobs: spec.queues * spec.jobsPerQueue, queues: spec.queues };
  try {
    const one: Deployment = {
      kind: 'one',
      masters: [{ host: ctx.host, port: ctx.port }],
      transport: () => IoredisTransport.connect(ctx.url),
      bull: () => ({ connection: new Redis(ctx.url, { maxRetriesPerRequest: null }), prefix: undefined }),
    };
    let cluster: Deployment | undefined;
    for (const variant of variants) {
      let on = one;
      if (variant.on === 'cluster') {
        if (!cluster) {
          local = await startLocalCluster({ masters: 3, replicas: 0 });
          const masters = local.nodes.map((n) => ({ host: n.host, port: n.port }));
          cluster = {
            kind: 'cluster',
            masters,
            transport: () => IoredisTransport.connectCluster(masters),
            bull: () => ({ connection: new Cluster(masters, { redisOptions: { maxRetriesPerRequest: null } }), prefix: '{bull}' }),
          };
        }
        on = cluster;
      }
      // a tenth of the workload first, not measured: scripts loaded on every master, and this
      // process warmed for each variant alike (unwarmed, whichever variant ran second ran faster:
      // BullMQ faster on the cluster in 5 rounds of 6 with it second, slower in 2 of 2 with it first)
      let got: Figures | undefined;
      try {
        if (!(await runVariant(ctx, impl, variant, on, { ...spec, jobsPerQueue: Math.max(1, Math.round(spec.jobsPerQueue / 10)) }))) continue;
        got = await runVariant(ctx, impl, variant, on, spec);
      } catch (error) {
        if (!(error instanceof UnsupportedVariant)) throw error;
        console.error(error.message);
        figures[`${variant.name}_jobs_per_s`] = null;
        continue;
      }
      if (!got) continue;
      Object.assign(figures, got);
      const us = figures[`${variant.name}_redis_us_per_job`];
      // jobs per second of Redis CPU: the drain's rate had Redis been busy all along (redis_busy 1)
      if (variant.on === 'one' && typeof us === 'number' && us > 0) figures[`${variant.name}_redis_ceiling_jobs_per_s`] = round(1e6 / us, 0);
      if (variant.on === 'cluster') Object.assign(figures, modelFigures(variant.name, figures));
    }
    return figures;
  } finally {
    await local?.stop();
  }
}

/**
 * `cluster` (issue 19): the same workload, 8 queues x 5,000 no-op jobs (addBulk in calls of
 * 1,000, the queues side by side; then one consumer per queue at concurrency 10), on the bench's
 * one Redis and on a local cluster of three masters (no replicas), echomq over
 * `IoredisTransport.connectCluster` and BullMQ over an ioredis Cluster with the prefix `{bull}`.
 *
 * Figures, per variant (`one_`, `cluster_`; the enqueue's under `<variant>_enqueue_`): jobs/s,
 * Redis commands and CPU (INFO cpu, sys + user, every master summed) per job, the busiest
 * master's CPU over the window (`redis_busy`), this process's (`node_busy`); on the cluster each
 * master's share of the commands, largest first, and the model (modelFigures). The drain is
 * measured from the consumers' start to the last completion. Each variant first runs a tenth of
 * the workload unmeasured (scripts loaded, the process warmed alike for both).
 */
export const clusterCase: BenchCase = {
  name: 'cluster',
  impls: ['echomq', 'bullmq'],
  run: (ctx, impl) => measureCluster(ctx, impl, sized(ctx, { full: CLUSTER_FULL, quick: CLUSTER_QUICK, smoke: CLUSTER_SMOKE })),
};
