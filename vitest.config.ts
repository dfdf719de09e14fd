import { defineConfig } from 'vitest/config';

/**
 * The Redis suites that drive the scripts through `redis.transport` and `redis.queue()`: they
 * run a second time over @upstash/redis and the REST bridge (design.md, testing layer 11).
 * Node-only suites (the consumers, the CLI, the launcher, command counts on a private Redis) and
 * the pure ones stay in the ioredis project alone.
 */
const TRANSPORT_SUITES = [
  'lifecycle',
  'doorbell',
  'clock',
  'pause',
  'remove',
  'retry',
  'promote',
  'fencing',
  'kind-door',
  'groups-admin',
  'fairness',
  'group-limits.property',
  'bad-input',
  'scripts',
  'project-transport',
  'row-format',
].map((name) => `test/${name}.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Suites share one Redis but each test works on its own random queue name.
    fileParallelism: true,
    projects: [
      {
        extends: true,
        test: {
          name: 'ioredis',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'tools/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'upstash',
          include: TRANSPORT_SUITES,
          globalSetup: ['test/global-setup.ts'],
        },
      },
    ],
  },
});
