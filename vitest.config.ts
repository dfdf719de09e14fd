import { defineConfig } from 'vitest/config';

/**
 * Tests by layer (docs/design.md, "Tests"):
 * - `unit`: pure units beside the code they test (`src/**\/*.test.ts`, `tools/`) and the checks of
 *   the tree itself (`test/project/`: import rules, the public API, types): no Redis, seconds.
 * - `ioredis`: every suite under `test/` against a private redis-server the global setup starts,
 *   and `test/project/readme.test.ts`, which runs the README's snippets on it.
 * - `cluster` and `cluster-upstash`: the same suites a third and a fourth time, over a local Redis
 *   Cluster (three masters, a replica each), through `IoredisTransport.connectCluster` and through
 *   @upstash/redis and the REST bridge over the cluster.
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
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'tools/**/*.test.ts', 'test/project/**/*.test.ts'],
          exclude: ['test/project/readme.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'ioredis',
          include: ['test/**/*.test.ts'],
          exclude: ['test/project/**/!(readme).test.ts'],
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'upstash', include: ['test/transport/**/*.test.ts'], globalSetup: ['test/global-setup.ts'] },
      },
      {
        extends: true,
        test: { name: 'cluster', include: ['test/transport/**/*.test.ts'], globalSetup: ['test/global-setup.ts'] },
      },
      {
        extends: true,
        test: { name: 'cluster-upstash', include: ['test/transport/**/*.test.ts'], globalSetup: ['test/global-setup.ts'] },
      },
    ],
  },
});
