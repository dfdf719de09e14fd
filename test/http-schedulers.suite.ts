import { describe, expect, it } from 'vitest';
import { Leases } from '../src/lease/leases.js';
import type { ApiTarget } from './http-call.js';
import { asJson, useHttpFixture } from './http-fixture.js';
import { checkInvariants } from './invariants.js';

/**
 * The scheduler routes of the HTTP contract (docs/design.md, "External contract"), against any
 * target (the Node server, the Worker under miniflare): each route's round trip, beside what the
 * TypeScript API reads of the same scheduler; the 404s; bad input answered 400 naming the field
 * with nothing written (every key of the queue, and its registry entry, compared before and
 * after); a fired job read and removed by its id; and the routes in the OpenAPI document.
 * `redisUrl` is the Redis behind the target: the suite fires slots there as a consumer's beat does.
 */
export function describeHttpSchedulers(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-sched', redisUrl, start });
    const { call, queueName: q, queueOf, stateOf } = fx;

    /** The request fails with `status`, `code` and a message matching `says`, and the queue's keys and registry entry are untouched. */
    async function refused(queue: string, status: number, code: string, says: RegExp, method: string, path: string, body?: unknown, rawBody?: string): Promise<void> {
      const before = await stateOf(queue);
      const answer = await call(method, path, body, rawBody);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body) ?? rawBody}: ${JSON.stringify(answer.body)}`).toBe(status);
      expect(answer.body.error?.code).toBe(code);
      expect(answer.body.error?.message).toMatch(says);
      expect(await stateOf(queue)).toEqual(before);
    }

    it('makes, reads, lists, changes in place and removes a scheduler; the record is the SchedulerRecord as JSON', async () => {
      const queue = q();
      const base = `/v1/queues/${queue}/schedulers`;
      const made = await call('PUT', `${base}/tick`, { every: 60_000, job: { payload: { kind: 'tick' }, group: 'g1', priority: 3, maxAttempts: 7, backoff: 500 } });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(made.body).toEqual({ id: 'tick', nextRunAt: expect.any(Number) });
      const one = await call('GET', `${base}/tick`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(asJson(await queueOf(queue).getScheduler('tick')));
      expect(one.body).toMatchObject({
        id: 'tick',
        every: 60_000,
        job: { payload: { kind: 'tick' }, group: 'g1', priority: 3, maxAttempts: 7, backoff: { type: 'fixed', delayMs: 500 } },
        nextRunAt: made.body.nextRunAt,
        lastRunAt: null,
        fired: 0,
      });

      // a cron in a time zone, its bounds as ISO text: read back as epoch ms
      const startAt = '2031-01-01T00:00:00+01:00';
      const nightly = await call('PUT', `${base}/nightly`, { cron: '0 3 * * *', tz: 'Europe/Berlin', startAt, limit: 5, job: { payload: 'report' } });
      expect(nightly.body).toEqual({ id: 'nightly', nextRunAt: Date.parse('2031-01-01T03:00:00+01:00') });
      const list = await call('GET', base);
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ schedulers: asJson(await queueOf(queue).listSchedulers()) });
      expect((list.body.schedulers as Array<{ id: string }>).map((s) => s.id)).toEqual(['tick', 'nightly']);
      expect((list.body.schedulers as unknown[])[1]).toMatchObject({ cron: '0 3 * * *', tz: 'Europe/Berlin', startAt: Date.parse(startAt), limit: 5, job: { payload: 'report', priority: 0 } });

      // upsert again: changed in place, one scheduler still
      const changed = await call('PUT', `${base}/nightly`, { cron: '30 4 * * *', tz: 'Europe/Berlin', startAt, job: { payload: 'report v2' } });
      expect(changed.body).toEqual({ id: 'nightly', nextRunAt: Date.parse('2031-01-01T04:30:00+01:00') });
      expect((await call('GET', `${base}/nightly`)).body).toMatchObject({ cron: '30 4 * * *', job: { payload: 'report v2' } });
      expect((await call('GET', `${base}/nightly`)).body).not.toHaveProperty('limit');
      expect((await call('GET', base)).body.schedulers).toHaveLength(2);
      // an end already past: it fires no more
      expect((await call('PUT', `${base}/over`, { every: 1000, endAt: 1000, job: { payload: 0 } })).body).toEqual({ id: 'over', nextRunAt: null });
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);

      expect(await call('DELETE', `${base}/nightly`)).toEqual({ status: 200, body: { id: 'nightly', removed: true } });
      expect(await queueOf(queue).getScheduler('nightly')).toBeNull();
      expect((await call('GET', base)).body.schedulers).toMatchObject([{ id: 'tick' }, { id: 'over' }]);
      await refused(queue, 404, 'EMQNOTFOUND', /nightly/, 'GET', `${base}/nightly`);
      await refused(queue, 404, 'EMQNOTFOUND', /nightly/, 'DELETE', `${base}/nightly`);
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
      // a queue with none lists none
      expect(await call('GET', `/v1/queues/${q()}/schedulers`)).toEqual({ status: 200, body: { schedulers: [] } });
    });

    it('a fired job is read and removed by its id JOB:<scheduler>@<slot>, and carries its scheduler, as its added event does', async () => {
      const queue = q();
      const { body } = await call('PUT', `/v1/queues/${queue}/schedulers/tick`, { every: 60_000, limit: 1, job: { payload: { n: 1 } } });
      const slot = body.nextRunAt as number;
      // a consumer's beat fires the first slot, due at once
      expect((await new Leases(queueOf(queue)).beat({ n: 0, leaseMs: 30_000 })).fired).toBe(1);
      const id = `JOB:tick@${slot}`;
      const job = await call('GET', `/v1/queues/${queue}/jobs/${id}`);
      expect(job.status, JSON.stringify(job.body)).toBe(200);
      expect(job.body).toMatchObject({ id, state: 'pending', payload: { n: 1 }, scheduler: { id: 'tick', slot } });
      expect(job.body).toEqual(asJson(await queueOf(queue).getJob(id)));
      // percent-encoded, the same job
      expect((await call('GET', `/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`)).body).toEqual(job.body);
      expect((await call('GET', `/v1/queues/${queue}/jobs?state=pending`)).body.jobs).toEqual([job.body]);
      const events = await call('GET', `/v1/queues/${queue}/events?after=0`);
      expect((events.body.events as Array<{ event: string }>).find((e) => e.event === 'added')).toMatchObject({ jobId: id, scheduler: { id: 'tick', slot } });
      // its limit reached, the scheduler fires no more
      expect((await call('GET', `/v1/queues/${queue}/schedulers/tick`)).body).toMatchObject({ nextRunAt: null, lastRunAt: slot, fired: 1 });
      expect(await call('DELETE', `/v1/queues/${queue}/jobs/${id}`)).toEqual({ status: 200, body: { id, removed: true } });
      await refused(queue, 404, 'EMQNOTFOUND', /tick@/, 'GET', `/v1/queues/${queue}/jobs/${id}`);
      // an enqueue may not give such an id
      await refused(queue, 400, 'EMQARG', /id/, 'POST', `/v1/queues/${queue}/jobs`, { payload: 1, id });
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
    });

    it('refuses bad input with 400 naming the field, and writes nothing', async () => {
      const queue = q();
      const path = `/v1/queues/${queue}/schedulers/s`;
      const job = { payload: 1 };
      // one scheduler already there: a refused upsert of it must not change it either
      expect((await call('PUT', path, { every: 60_000, job })).status).toBe(200);
      const cases: Array<[RegExp, unknown]> = [
        [/cron.*every|every.*cron/, { cron: '* * * * *', every: 1000, job }],
        [/cron.*every|every.*cron/, { job }],
        [/cron/, { cron: 'not a cron', job }],
        [/cron/, { cron: '* * * *', job }],
        [/cron/, { cron: '61 * * * *', job }],
        [/cron/, { cron: 5, job }],
        [/tz/, { cron: '* * * * *', tz: 'Mars/Olympus', job }],
        [/tz/, { every: 1000, tz: 'UTC', job }],
        [/every/, { every: 99, job }],
        [/every/, { every: 150.5, job }],
        [/every/, { every: '1000', job }],
        [/startAt/, { every: 1000, startAt: 'tomorrow', job }],
        [/endAt/, { every: 1000, endAt: -1, job }],
        [/endAt/, { every: 1000, startAt: 2_000_000_000_000, endAt: 1_000_000_000_000, job }],
        [/limit/, { every: 1000, limit: 0, job }],
        [/job/, { every: 1000 }],
        [/payload/, { every: 1000, job: {} }],
        [/group/, { every: 1000, job: { payload: 1, group: 'has space' } }],
        [/priority/, { every: 1000, job: { payload: 1, priority: -1 } }],
        [/maxAttempts/, { every: 1000, job: { payload: 1, maxAttempts: 0 } }],
        [/backoff/, { every: 1000, job: { payload: 1, backoff: { type: 'linear', delayMs: 5 } } }],
        [/extra|unrecognized/i, { every: 1000, extra: true, job }],
        [/id|unrecognized/i, { every: 1000, job: { payload: 1, id: 'mine' } }],
      ];
      for (const [says, body] of cases) await refused(queue, 400, 'EMQARG', says, 'PUT', path, body);
      await refused(queue, 400, 'EMQARG', /body|JSON/i, 'PUT', path, undefined, '{not json');
      await refused(queue, 400, 'EMQARG', /id/, 'PUT', `/v1/queues/${queue}/schedulers/a%20b`, { every: 1000, job });
      await refused(queue, 400, 'EMQARG', /id/, 'PUT', `/v1/queues/${queue}/schedulers/a@b`, { every: 1000, job });
      await refused(queue, 400, 'EMQARG', /id/, 'GET', `/v1/queues/${queue}/schedulers/${'x'.repeat(129)}`);
      await refused(queue, 400, 'EMQARG', /id/, 'DELETE', `/v1/queues/${queue}/schedulers/a@b`);
      await refused(queue, 400, 'EMQARG', /queue/, 'GET', '/v1/queues/bad%20name/schedulers');
      await refused(queue, 413, 'EMQTOOLARGE', /payload|body/, 'PUT', path, { every: 1000, job: { payload: 'x'.repeat(1024 * 1024 + 10) } });
      // and nothing on a queue that has none: no registration, no key
      const fresh = q();
      await refused(fresh, 400, 'EMQARG', /cron/, 'PUT', `/v1/queues/${fresh}/schedulers/s`, { cron: 'every day', job });
      expect(await fx.raw.keys(`emq:{${fresh}}:*`)).toEqual([]);
      expect(await fx.raw.sismember('emq:queues', fresh)).toBe(0);
    });

    it('documents the scheduler routes in the OpenAPI document', async () => {
      const doc = await call('GET', '/v1/openapi.json');
      const paths = doc.body.paths as Record<string, Record<string, unknown>>;
      expect(Object.keys(paths['/v1/queues/{queue}/schedulers']!)).toEqual(['get']);
      expect(Object.keys(paths['/v1/queues/{queue}/schedulers/{id}']!).sort()).toEqual(['delete', 'get', 'put']);
      const schemas = (doc.body.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
      expect(Object.keys(schemas.Scheduler!.properties)).toEqual(
        expect.arrayContaining(['id', 'cron', 'tz', 'every', 'startAt', 'endAt', 'limit', 'job', 'nextRunAt', 'lastRunAt', 'fired', 'createdAt', 'updatedAt']),
      );
      expect(Object.keys(schemas.Job!.properties)).toContain('scheduler');
      expect(Object.keys(schemas.QueueEvent!.properties)).toContain('scheduler');
    });
  });
}
