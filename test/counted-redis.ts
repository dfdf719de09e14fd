import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { IoredisTransport } from '../src/node/ioredis-transport.js';
import { type LocalRedis, startLocalRedis } from '../src/node/local-redis.js';

/** A Redis of a suite's own, whose commands are counted: no other suite's traffic lands on it. */
export interface CountedRedis {
  /** A plain client for reading state; its INFO and CONFIG calls are never counted. */
  readonly raw: Redis;
  /** The transport for the code under test. */
  readonly transport: IoredisTransport;
  /** Commands Redis ran since the last CONFIG RESETSTAT (INFO commandstats; commands inside scripts count), INFO and CONFIG left out. */
  commandsSinceReset(): Promise<number>;
  /** Commands Redis ran while `work` ran: a RESETSTAT, the work, then commandsSinceReset. */
  commandsOf(work: () => Promise<unknown>): Promise<number>;
}

/**
 * Starts a private redis-server for the file (startLocalRedis) before its tests and stops it after.
 * Call at the top of a describe block; the fields are there once its tests run.
 *
 * @example
 * const redis = useCountedRedis();
 * it('adds in one call', async () => {
 *   expect(await redis.commandsOf(() => new Queue(redis.transport, 'q').add(1))).toBe(14);
 * });
 */
export function useCountedRedis(): CountedRedis {
  let server: LocalRedis | undefined;
  let raw: Redis | undefined;
  let transport: IoredisTransport | undefined;
  beforeAll(async () => {
    server = await startLocalRedis({ env: { PATH: process.env.PATH } });
    raw = new Redis(server.url);
    transport = IoredisTransport.connect(server.url);
  });
  afterAll(async () => {
    await transport?.close();
    raw?.disconnect();
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useCountedRedis: its Redis starts in beforeAll; use it inside a test');
    return value;
  };
  const counted: CountedRedis = {
    get raw() {
      return started(raw);
    },
    get transport() {
      return started(transport);
    },
    async commandsSinceReset() {
      const info = await started(raw).info('commandstats');
      let total = 0;
      for (const [, name, calls] of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) {
        if (name !== 'info' && !name!.startsWith('config')) total += Number(calls);
      }
      return total;
    },
    async commandsOf(work) {
      await started(raw).config('RESETSTAT');
      await work();
      return counted.commandsSinceReset();
    },
  };
  return counted;
}
