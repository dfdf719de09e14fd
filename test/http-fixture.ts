import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { IoredisTransport } from '../src/node/ioredis-transport.js';
import { PARTITIONS_REGISTRY } from '../src/partitions/partition-of.js';
import { Queue } from '../src/queue/queue.js';
import { type Answer, type ApiTarget, callApi } from './http-call.js';
import { snapshotKeys } from './helpers.js';

/** How a shared HTTP suite reaches what it tests. */
export interface HttpFixtureOptions {
  /** What every queue name the suite makes starts with (`http-admin`: `http-admin-<10 hex>`). */
  readonly prefix: string;
  /** The Redis behind the target: the suite reads state there, and drives a consumer's side. */
  readonly redisUrl: () => string;
  /** Starts the target (the Node server, the Worker under miniflare). */
  readonly start: () => Promise<ApiTarget>;
  /** Delete every queue the suite named (its keys, its partitions', its registry entries) once it ends. */
  readonly removeQueues?: boolean;
}

/**
 * What every shared HTTP suite (`test/http-*.suite.ts`) stands on: the target started before the
 * suite's tests and closed after them, a raw client and a transport to the Redis behind it, fresh
 * queue names, and one request with the target's token. Read the fields inside tests and hooks,
 * not while the suite is collected: they exist once `beforeAll` ran.
 */
export interface HttpFixture {
  /** The running API. */
  readonly target: ApiTarget;
  /** A client of the Redis behind the target. */
  readonly raw: Redis;
  /** A transport to the same Redis, for the TypeScript API's side. */
  readonly transport: IoredisTransport;
  /** A queue name no other test uses: the prefix and 10 random hex digits. */
  queueName(): string;
  /** One request to the target, with its token (callApi). */
  call(method: string, path: string, body?: unknown, rawBody?: string): Promise<Answer>;
  /** The TypeScript API's Queue of `name`, on the Redis behind the target. */
  queueOf(name: string): Queue;
  /** Every key of `queue` with its type, value and whether it has a TTL, and its registry entry. */
  stateOf(queue: string): Promise<unknown>;
}

/** `value` as JSON would carry it (undefined fields gone, dates as text): what an HTTP body of it is. */
export const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/**
 * The fixture of one shared HTTP suite: call it first inside the suite's `describe`; it adds the
 * `beforeAll` that starts the target and the `afterAll` that closes everything it opened.
 *
 * @example
 * describe(label, () => {
 *   const fx = useHttpFixture({ prefix: 'http-rate', redisUrl, start });
 *   it('sets a limit', async () => expect((await fx.call('PUT', `/v1/queues/${fx.queueName()}/rate`, null)).status).toBe(200));
 * });
 */
export function useHttpFixture(options: HttpFixtureOptions): HttpFixture {
  let opened: { target: ApiTarget; raw: Redis; transport: IoredisTransport } | undefined;
  const named: string[] = [];
  const live = (): NonNullable<typeof opened> => {
    if (!opened) throw new Error('the HTTP fixture is read before its beforeAll ran');
    return opened;
  };
  beforeAll(async () => {
    const target = await options.start();
    opened = { target, raw: new Redis(options.redisUrl()), transport: IoredisTransport.connect(options.redisUrl()) };
  }, 60_000);
  afterAll(async () => {
    if (!opened) return;
    const { target, raw, transport } = opened;
    if (options.removeQueues) {
      for (const name of named) {
        const keys = [...(await raw.keys(`emq:{${name}}:*`)), ...(await raw.keys(`emq:{${name}~*}:*`))];
        if (keys.length > 0) await raw.del(...keys);
        await raw.srem('emq:queues', name);
        await raw.hdel(PARTITIONS_REGISTRY, name);
      }
    }
    await transport.close();
    raw.disconnect();
    await target.close();
  });
  return {
    get target() {
      return live().target;
    },
    get raw() {
      return live().raw;
    },
    get transport() {
      return live().transport;
    },
    queueName: () => {
      const name = `${options.prefix}-${randomBytes(5).toString('hex')}`;
      named.push(name);
      return name;
    },
    call: (method, path, body, rawBody) => callApi(live().target, method, path, body, rawBody),
    queueOf: (name) => new Queue(live().transport, name),
    stateOf: async (queue) => ({
      keys: await snapshotKeys(live().raw, `emq:{${queue}}:*`),
      registered: await live().raw.sismember('emq:queues', queue),
    }),
  };
}
