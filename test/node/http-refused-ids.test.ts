import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveApi, type ApiServer } from '../../src/node/cli/serve.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type LocalRedis, startLocalRedis } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import { queueName, snapshotKeys } from '../helpers.js';

/**
 * "400: nothing written" for every id the API refuses, on a Redis of its own: with no other suite
 * writing to it, a snapshot of every key (the registry of queues included) pins it exactly. A bare
 * `JOB:` once passed the schema and the core, and the queue's registration, riding in the same
 * round trip as the enqueue the kind door then refused, was left in `emq:queues` and `/metrics`.
 */
describe('the HTTP API writes nothing for a refused job id', () => {
  let server: LocalRedis;
  let raw: Redis;
  let transport: IoredisTransport;
  let api: ApiServer;

  beforeAll(async () => {
    server = await startLocalRedis({ env: { PATH: process.env.PATH } });
    raw = new Redis(server.url, { protocol: 2 });
    transport = IoredisTransport.connect(server.url);
    api = await serveApi({ transport, port: 0, log: () => {} });
    // a registry with a queue in it, so a stray registration would change a key that exists
    await new Queue(transport, queueName('there')).add({ seed: true });
  });
  afterAll(async () => {
    await api.close();
    await transport.close();
    raw.disconnect();
    await server.stop();
  });

  const post = async (path: string, body: unknown): Promise<{ status: number; code: string | undefined }> => {
    const res = await fetch(api.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const answer = (await res.json()) as { error?: { code: string } };
    return { status: res.status, code: answer.error?.code };
  };

  // the ids the scripts' kind door refuses as they would reach it, and what the API must refuse
  // of the ids a client may send
  const REFUSED: unknown[] = ['JOB:', '', ' JOB:1', 'JOB:1 ', 'JOB:' + 'x'.repeat(253), 'x'.repeat(201), 'a/b', 'é', 42, null];

  it('refuses each with 400 on both enqueue routes, and every key stays as it was', async () => {
    for (const id of REFUSED) {
      const queue = queueName('refused');
      const size = await raw.dbsize();
      const before = await snapshotKeys(raw, '*');
      const one = await post(`/v1/queues/${queue}/jobs`, { payload: 1, id });
      const bulk = await post(`/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 1 }, { payload: 2, id }] });
      expect(await raw.dbsize(), JSON.stringify(id)).toBe(size);
      expect(await snapshotKeys(raw, '*'), JSON.stringify(id)).toEqual(before);
      expect(await (await fetch(`${api.url}/metrics`)).text()).not.toContain(queue);
      expect(one, `one ${JSON.stringify(id)}`).toEqual({ status: 400, code: 'EMQARG' });
      expect(bulk, `bulk ${JSON.stringify(id)}`).toEqual({ status: 400, code: 'EMQARG' });
    }
  });
});
