import { Redis } from 'ioredis';
import { freePort } from '../../src/node/local-redis.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { activeHandles, handlesLeftOver, TIMERS } from '../lib/active-handles.js';
import { FuzzTally } from '../lib/fuzz-tally.js';
import { keyspaceDigest } from '../lib/keyspace-digest.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';
import { spawnBinChecks, fuzzCliArgv } from './fuzz-options/cli-argv.js';
import { fuzzConsumerOptions } from './fuzz-options/consumer-options.js';
import { fuzzQueueCalls } from './fuzz-options/queue-calls.js';

/** The databases of the run's Redis this scenario owns (and empties): the Queue's and consumers', the CLI's. */
const QUEUE_DB = 2;
const CLI_DB = 3;

const withDb = (url: string, db: number): string => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
};

/** A check of the checker: a digest that did not see a key added, or a value changed, would pass every case. */
async function digestSeesWrites(raw: Redis): Promise<void> {
  const empty = await keyspaceDigest(raw);
  await raw.hset('fuzz:canary', 'f', '1');
  const added = await keyspaceDigest(raw, empty);
  await raw.hset('fuzz:canary', 'f', '2');
  const changed = await keyspaceDigest(raw, added);
  await raw.del('fuzz:canary');
  if (added.sha1 === empty.sha1 || changed.sha1 === added.sha1 || (await keyspaceDigest(raw, empty)).sha1 !== empty.sha1) {
    throw new Error('fuzz-options: the keyspace digest does not see writes');
  }
}

/**
 * Fuzzed input beyond HTTP (fuzz-http has the routes): fast-check over `new Queue(transport,
 * name, options)` and its producer and admin methods, over the consumers' constructors and
 * options, and over the `emq` command line (in process through `main`, and a few lines through
 * the real bin). Arguments valid, at the edges and of the wrong kind (NaN, Infinity, negative,
 * huge, fractions, empty strings, `JOB:`-like ids, oversize payloads, unknown keys, undefined,
 * cycles, BigInt, symbols, functions). Promises: every refusal a typed EmqError with a code (a
 * documented exit code for the CLI), never a TypeError, a raw Redis error or a throw out of
 * main; a refused call, a read and a refused command change no key and no value (a digest of
 * the whole database before and after); an accepted write leaves the invariants clean; no call
 * over 5 s; bad consumer options and refused commands leave no socket, server or timer behind.
 */
export const fuzzOptions: Scenario = {
  name: 'fuzz-options',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const sizes = ctx.quick ? { queue: 150, consumer: 40, cli: 250, spawned: 4 } : { queue: 1_500, consumer: 300, cli: 2_000, spawned: 12 };
    const started = performance.now();
    const tally = new FuzzTally();
    const durations: Record<string, number> = {};
    const queueUrl = withDb(ctx.redisUrl, QUEUE_DB);
    const cliUrl = withDb(ctx.redisUrl, CLI_DB);
    const awayUrl = `redis://127.0.0.1:${await freePort()}`;
    const queueRaw = new Redis(queueUrl);
    const cliRaw = new Redis(cliUrl);
    const transport = IoredisTransport.connect(queueUrl);
    // as the CLI connects: one try, no reconnecting, so a call fails at once with EMQREDIS
    const away = IoredisTransport.connect(awayUrl, { maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => null });
    // a time an option let through that a Node timer cannot wait: the timer fires after 1 ms instead
    const onWarning = (warning: Error): void => {
      if (warning.name === 'TimeoutOverflowWarning') tally.broke('server_errors', `${warning.name}: ${warning.message.split('\n')[0]}`);
    };
    process.on('warning', onWarning);
    try {
      await queueRaw.flushdb();
      await cliRaw.flushdb();
      await digestSeesWrites(queueRaw);
      // each part timed, and its timers checked once it is done (a case may leave ioredis's own
      // 2 s disconnect timer, so a timer is a leak only if it outlives its part by 3 s)
      const timed = async (part: string, work: () => Promise<void>): Promise<void> => {
        const t = performance.now();
        const timers = activeHandles(TIMERS);
        await work();
        durations[part] = Math.round((performance.now() - t) / 100) / 10;
        const left = await handlesLeftOver(timers, TIMERS, 3_000);
        if (left !== '') tally.broke('handles_leaked', `timers left 3 s after the ${part} part: ${left}`);
      };
      await timed('queue', () => fuzzQueueCalls({ raw: queueRaw, transport, away, runs: sizes.queue, seed: ctx.seed, tally }));
      await timed('consumer', () => fuzzConsumerOptions({ raw: queueRaw, transport, url: queueUrl, runs: sizes.consumer, seed: ctx.seed, tally }));
      const cli = { raw: cliRaw, targets: { upUrl: cliUrl, awayUrl, takenPort: Number(new URL(ctx.redisUrl).port) }, runs: sizes.cli, seed: ctx.seed, tally };
      await timed('cli', () => fuzzCliArgv(cli));
      await timed('spawned', () => spawnBinChecks(cli, sizes.spawned));
    } finally {
      process.off('warning', onWarning);
      await transport.close();
      await away.close();
      queueRaw.disconnect();
      cliRaw.disconnect();
    }
    const cases = Object.values(tally.cases).reduce((a, b) => a + b, 0);
    return {
      scenario: 'fuzz-options',
      jobs: cases,
      faults: `${cases} generated cases (seed ${ctx.seed})`,
      cases: tally.cases,
      refusals: tally.refusals,
      cli_exits: tally.exits,
      ...tally.faults,
      jobs_lost: 0,
      duplicate_jobs: 0,
      not_finished: 0,
      ...(tally.samples.length > 0 ? { first_faults: tally.samples.join(' | ') } : {}),
      durations_s: durations,
      duration_s: Math.round((performance.now() - started) / 100) / 10,
    };
  },
};
