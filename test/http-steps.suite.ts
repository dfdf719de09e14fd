import { describe, expect, it } from 'vitest';
import { runHandler } from '../src/handler.js';
import { Leases } from '../src/lease/leases.js';
import type { Queue } from '../src/queue/queue.js';
import type { ApiTarget } from './http-call.js';
import { useHttpFixture } from './http-fixture.js';
import { snapshotKeys } from './helpers.js';
import { checkInvariants } from './invariants.js';

/**
 * `POST /v1/queues/:q/events/:name` and the steps of `GET job` (docs/guides/steps.md), against any
 * target (the Node server, the Worker under miniflare): an event resumes the job waiting for it,
 * once; the same send again (its id) answers as the first and writes nothing; the job shows its
 * steps; bad input is a 400 that writes nothing; the route is in the OpenAPI document.
 */
export function describeHttpSteps(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-steps', redisUrl, start });
    const { call, queueName: q, queueOf } = fx;

    /** A job of `queue` that ran one step and waits for `event` matching `{ order }`. */
    async function waiting(queue: Queue, order: number): Promise<string> {
      const { id } = await queue.add({ order });
      const leases = new Leases(queue);
      const { jobs } = await leases.claim(1, 30_000);
      const finished = await Promise.all(
        jobs.map(async (job) => ({
          job,
          outcome: await runHandler(
            async (_, { step }) => {
              await step.run('charge', () => ({ charged: order }));
              await step.waitForEvent('paid', { event: 'order.paid', match: { order }, timeoutMs: 60_000 });
            },
            job,
            { controller: new AbortController(), steps: leases.steps },
          ),
        })),
      );
      expect((await leases.round({ finished, leaseMs: 30_000 })).settled).toEqual(['awaiting']);
      return id;
    }

    it('an event resumes the job waiting for it, once; sent again with its id it answers the same and writes nothing', async () => {
      const name = q();
      const queue = queueOf(name);
      const id = await waiting(queue, 7);
      const other = await waiting(queue, 8);
      const job = await call('GET', `/v1/queues/${name}/jobs/${id}`);
      expect(job.body).toMatchObject({ state: 'awaiting', steps: [{ index: 1, name: 'charge', kind: 'run', state: 'done', result: { charged: 7 } }, { index: 2, name: 'paid', kind: 'wait', state: 'waiting', event: 'order.paid' }] });
      expect((job.body as { timeoutAt: number }).timeoutAt).toBeGreaterThan(0);
      const sent = await call('POST', `/v1/queues/${name}/events/order.paid`, { data: { order: 7, amount: 12.5 }, id: 'paid-7' });
      expect(sent).toEqual({ status: 200, body: { id: 'paid-7', resumed: 1 } });
      const before = await snapshotKeys(fx.raw, `emq:{${name}}:*`);
      expect(await call('POST', `/v1/queues/${name}/events/order.paid`, { data: { order: 7 }, id: 'paid-7' })).toEqual({ status: 200, body: { id: 'paid-7', resumed: 1 } });
      expect(await snapshotKeys(fx.raw, `emq:{${name}}:*`)).toEqual(before);
      const resumed = (await queue.getJob(id))!;
      expect(['pending', 'active', 'completed']).toContain(resumed.state);
      expect(resumed.steps?.[1]).toMatchObject({ state: 'done', eventId: 'paid-7', result: { order: 7, amount: 12.5 } });
      expect((await queue.getJob(other))!.state).toBe('awaiting');
      const stats = await call('GET', `/v1/queues/${name}`);
      expect(stats.body).toMatchObject({ counts: { awaiting: 1, sleeping: 0, cancelled: 0 } });
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it('refuses a bad event name or body with a 400 that writes nothing', async () => {
      const name = q();
      const queue = queueOf(name);
      await waiting(queue, 1);
      const before = await snapshotKeys(fx.raw, `emq:{${name}}:*`);
      for (const [path, body] of [
        [`/v1/queues/${name}/events/has%20space`, { data: 1 }],
        [`/v1/queues/${name}/events/ok`, { data: 1, keepMs: -1 }],
        [`/v1/queues/${name}/events/ok`, { data: 1, id: 'a b' }],
        [`/v1/queues/${name}/events/ok`, { data: 1, extra: true }],
      ] as const) {
        const answer = await call('POST', path, body);
        expect(answer.status, path).toBe(400);
        expect(answer.body).toMatchObject({ error: { code: expect.stringMatching(/^EMQ/) } });
      }
      expect(await snapshotKeys(fx.raw, `emq:{${name}}:*`)).toEqual(before);
    });

    it('documents the route in the OpenAPI document', async () => {
      const doc = (await call('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } };
      expect(Object.keys(doc.paths['/v1/queues/{queue}/events/{name}'] ?? {})).toEqual(['post']);
      expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['SendEvent', 'SentEvent', 'Step']));
    });
  });
}
