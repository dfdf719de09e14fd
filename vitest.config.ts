import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/sequencer.js';

/**
 * The suites that use the CPU rather than wait: they start processes (`emq`, tsx, npm, wrangler,
 * workerd, Chromium, a Redis Cluster of their own) or run a compiler in process (tsc over the
 * README's blocks). They run first, two at a time, so none starves a timing-sensitive suite (at
 * three at a time the group took 192-196 s against 171 s: each suite ran slower beside two).
 */
const CPU_BOUND = [
  'test/node/cli*.test.ts',
  'test/node/package.test.ts',
  'test/node/start.test.ts',
  'test/edge/**/*.test.ts',
  'test/platforms/**/*.test.ts',
  'test/browser/**/*.test.ts',
  'test/project/readme.test.ts',
];

/**
 * The suites whose assertions hold a consumer to a pace (at least 90% of a rate limit used while
 * 32 handlers run, a partition's wake-up within tens of ms): they run last, one at a time, with
 * the machine to themselves. Beside the Redis suites, four at a time on 2 cores, a consumer starved
 * of CPU used 85% of its limit.
 */
const PACED = ['test/node/consumer-rate-limits.test.ts', 'test/node/partitioned-consumer.test.ts'];

/**
 * The suites that wait on Redis, on timers, on a consumer's beat run after them, this many at a
 * time: on 2 cores a file's own waits leave room for three more (vitest's default is one less than
 * the cores: one file at a time here, 723 s of files in 874 s). Some drive Redis hard (the property
 * suites, 20,000 jobs through the events stream): a file takes three times as long beside three
 * others, the group a third of the time.
 */
const WAITING_WORKERS = 4;
const waiting = { maxWorkers: WAITING_WORKERS, sequence: { groupOrder: 1 } };

/**
 * The transport suites, in each of their four runs, share a worker's modules from file to file
 * (`isolate: false`): each file's fresh process and imports were half of their CPU (the ioredis
 * run: 72 s of CPU isolated, 37 s shared). They hold no state past a file (each test its own
 * queue; fake timers put back). The node suites keep a process each: they start consumers, set
 * process-wide hooks and bench BullMQ beside echomq, and one of them failed when shared.
 */
const transportSuites = { include: ['test/transport/**/*.test.ts'], globalSetup: ['test/global-setup.ts'], isolate: false, ...waiting };

/**
 * Tests by layer (docs/design/tests.md), in three groups run one after the other (vitest's
 * `sequence.groupOrder`): first `unit` and `processes`, CPU-bound, two files at a time; then the
 * Redis suites, WAITING_WORKERS at a time; last `paced`, the PACED suites one at a time.
 * - `unit`: pure units beside the code they test (`src/**\/*.test.ts`, `tools/`) and the checks of
 *   the tree itself (`test/project/`: import rules, the public API, types): no Redis, seconds.
 * - `processes`: the CPU_BOUND suites, against the private redis-server the global setup starts
 *   (which also builds `emq` once for them), `test/project/readme.test.ts` among them: it runs
 *   the README's snippets on it.
 * - `ioredis`: the suites in `test/transport/` against that redis-server, through ioredis.
 * - `node`: every other suite under `test/` against it, through ioredis (`paced`: the PACED ones).
 * - `cluster` and `cluster-upstash`: the transport suites a third and a fourth time, over a local
 *   Redis Cluster (three masters, a replica each), through `IoredisTransport.connectCluster` and
 *   through @upstash/redis and the REST bridge over the cluster.
 * - `upstash`: the suites in `test/transport/` a second time, over @upstash/redis and the REST
 *   bridge: a suite that drives the scripts through `redis.transport` goes in that folder and runs
 *   on both transports; node-only suites (`test/node/`) and the Worker under miniflare
 *   (`test/edge/`) run once.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    // consumers log their connection's changes on stderr by default ("[emq] consumer of q:
    // connected to ..."): one line per consumer, kept out of the test output
    onConsoleLog: (log) => !log.startsWith('[emq] '),
    hookTimeout: 30_000,
    // a TimeoutOverflowWarning fails the file it was printed in
    setupFiles: ['test/timer-overflow-guard.ts'],
    // Suites share one Redis but each test works on its own random queue name.
    fileParallelism: true,
    // the longest suites first within each group, a shared project's files together (test/sequencer.ts)
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'tools/**/*.test.ts', 'test/project/**/*.test.ts'],
          exclude: ['test/project/readme.test.ts'],
          // pure and quick: a fresh process per file was most of their time (0.3-0.5 s each)
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'processes', include: CPU_BOUND, globalSetup: ['test/global-setup.ts'], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'ioredis', ...transportSuites },
      },
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/project/**/*.test.ts', 'test/transport/**/*.test.ts', ...CPU_BOUND, ...PACED],
          globalSetup: ['test/global-setup.ts'],
          ...waiting,
        },
      },
      {
        extends: true,
        test: { name: 'paced', include: PACED, globalSetup: ['test/global-setup.ts'], maxWorkers: 1, sequence: { groupOrder: 2 } },
      },
      {
        extends: true,
        test: { name: 'upstash', ...transportSuites },
      },
      {
        extends: true,
        test: { name: 'cluster', ...transportSuites },
      },
      {
        extends: true,
        test: { name: 'cluster-upstash', ...transportSuites },
      },
    ],
  },
});
