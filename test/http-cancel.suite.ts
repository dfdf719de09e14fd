import { describe, expect, it } from 'vitest';
import { Leases } from '../src/lease/leases.js';
import { Queue } from '../src/queue/queue.js';
import type { ApiTarget } from './http-call.js';
import { useHttpFixture } from './http-fixture.js';
import { checkInvariants } from './invariants.js';

/**
 * The cancel routes (docs/guides/job-controls.md), against any target (the Node server, the Worker
 * under miniflare): `POST .../jobs/:id/cancel` ends a job not running at once and answers a running
 * one `cancelling`; the same cancel again answers as the first and writes nothing; a finished job
 * is a 409, none a 404, a bad reason a 400, none of them writing anything; `POST .../cancel`
 * cancels a state's jobs (of a group, or the ungrouped ones); the cancelled jobs are listed,
 * counted, cleaned and gauged; both routes are in the OpenAPI document. Each effect is read in Redis.
 */
export function describeHttpCancel(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-cancel', redisUrl, start });
    const { call, queueName: q } = fx;

    /** The job's row as Redis holds it: its state (`s`) and its cancel reason (`cx`). */
    const rowOf = async (queue: string, id: string): Promise<{ s?: string; cx?: string }> => fx.raw.hgetall(`emq:{${queue}}:job:${id}`);
    /** The cancelled index: its ids, oldest first. */
    const cancelledIds = (queue: string): Promise<string[]> => fx.raw.zrange(`emq:{${queue}}:cancelled`, 0, '-1');

    /** The request fails with `status` and `code`, and the queue's keys and registry entry are untouched. */
    async function refused(queue: string, status: number, code: string, path: string, body?: unknown, rawBody?: string): Promise<void> {
      const before = await fx.stateOf(queue);
      const answer = await call('POST', path, body, rawBody);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.body.error?.code, JSON.stringify(answer.body)).toBe(code);
      expect(await fx.stateOf(queue)).toEqual(before);
    }

    /** A consumer's side of `queue`, completed rows kept: what a Node process claims and settles with. */
    const consumer = (queue: string) => {
      const side = new Queue(fx.transport, queue, { keepCompletedMs: -1 });
      return { queue: side, leases: new Leases(side) };
    };

    it('cancels a pending job at once, keeps its reason, answers a second cancel as the first and writes nothing then', async () => {
      const name = q();
      const { id } = (await call('POST', `/v1/queues/${name}/jobs`, { payload: { upload: 7 } })).body as { id: string };
      const other = (await call('POST', `/v1/queues/${name}/jobs`, { payload: 'stays' })).body as { id: string };
      expect(await call('POST', `/v1/queues/${name}/jobs/${id}/cancel`, { reason: 'the user deleted the upload' })).toEqual({ status: 200, body: { id, state: 'cancelled' } });
      expect(await rowOf(name, id)).toMatchObject({ s: 'cancelled', cx: 'the user deleted the upload' });
      expect(await cancelledIds(name)).toEqual([id]);
      expect(await fx.raw.hget(`emq:{${name}}:job:${other.id}`, 's')).toBe('pending');
      const job = await call('GET', `/v1/queues/${name}/jobs/${id}`);
      expect(job.body).toMatchObject({ id, state: 'cancelled', cancelReason: 'the user deleted the upload' });
      expect((job.body as { finishedAt: number }).finishedAt).toBeGreaterThan(0);

      // again, with another reason, and with no body: the first answer, nothing written
      const before = await fx.stateOf(name);
      expect(await call('POST', `/v1/queues/${name}/jobs/${id}/cancel`, { reason: 'again' })).toEqual({ status: 200, body: { id, state: 'cancelled' } });
      expect(await call('POST', `/v1/queues/${name}/jobs/${id.slice('JOB:'.length)}/cancel`)).toEqual({ status: 200, body: { id, state: 'cancelled' } });
      expect(await fx.stateOf(name)).toEqual(before);

      // no body at all: the default reason
      const plain = (await call('POST', `/v1/queues/${name}/jobs`, { payload: 'plain', delayMs: 60_000 })).body as { id: string };
      expect(await call('POST', `/v1/queues/${name}/jobs/${plain.id}/cancel`)).toEqual({ status: 200, body: { id: plain.id, state: 'cancelled' } });
      expect(await rowOf(name, plain.id)).toMatchObject({ s: 'cancelled', cx: 'cancelled' });
      expect(await fx.raw.zcard(`emq:{${name}}:scheduled`)).toBe(0);
      expect((await call('GET', `/v1/queues/${name}`)).body).toMatchObject({ counts: { pending: 1, scheduled: 0, cancelled: 2 } });
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it('refuses an unknown job (404), a finished one (409) and a bad reason or body (400), writing nothing', async () => {
      const name = q();
      const { queue, leases } = consumer(name);
      const done = await queue.add('done');
      const died = await queue.add('died', { maxAttempts: 1 });
      const [first, second] = (await leases.claim(2, 30_000)).jobs;
      expect([first!.id, second!.id]).toEqual([done.id, died.id]);
      await leases.complete([{ id: first!.id, token: first!.token }]);
      await leases.fail([{ id: second!.id, token: second!.token, error: 'boom' }]);
      const waiting = await queue.add('waits');
      expect(await fx.raw.hget(`emq:{${name}}:job:${done.id}`, 's')).toBe('completed');
      expect(await fx.raw.hget(`emq:{${name}}:job:${died.id}`, 's')).toBe('dead');

      await refused(name, 404, 'EMQNOTFOUND', `/v1/queues/${name}/jobs/JOB:nope/cancel`);
      await refused(name, 409, 'EMQSTATE', `/v1/queues/${name}/jobs/${done.id}/cancel`, { reason: 'too late' });
      await refused(name, 409, 'EMQSTATE', `/v1/queues/${name}/jobs/${died.id}/cancel`);
      const cancel = `/v1/queues/${name}/jobs/${waiting.id}/cancel`;
      await refused(name, 400, 'EMQARG', cancel, { reason: '' });
      await refused(name, 400, 'EMQARG', cancel, { reason: 'x'.repeat(1001) });
      await refused(name, 400, 'EMQARG', cancel, { reason: 7 });
      await refused(name, 400, 'EMQARG', cancel, { reason: 'ok', why: 'unknown field' });
      await refused(name, 400, 'EMQARG', cancel, undefined, '{"reason":');
      await refused(name, 400, 'EMQARG', `/v1/queues/${name}/jobs/has%20space/cancel`);
      // a body that is not JSON is refused, not read as no body
      const before = await fx.stateOf(name);
      const text = await fetch(`${fx.target.baseUrl}${cancel}`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', ...(fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {}) },
        body: 'reason=nope',
      });
      expect(text.status).toBe(400);
      expect(await text.json()).toMatchObject({ error: { code: 'EMQARG' } });
      expect(await fx.stateOf(name)).toEqual(before);
      // a reason of exactly the most characters is taken
      expect(await call('POST', cancel, { reason: 'y'.repeat(1000) })).toEqual({ status: 200, body: { id: waiting.id, state: 'cancelled' } });
      expect((await rowOf(name, waiting.id)).cx).toBe('y'.repeat(1000));
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it('answers a running job cancelling, shows it, and its settle ends it cancelled', async () => {
      const name = q();
      const { queue, leases } = consumer(name);
      const { id } = await queue.add({ long: true });
      const [held] = (await leases.claim(1, 30_000)).jobs;
      expect(await call('POST', `/v1/queues/${name}/jobs/${id}/cancel`, { reason: 'stop it' })).toEqual({ status: 200, body: { id, state: 'cancelling' } });
      expect(await rowOf(name, id)).toMatchObject({ s: 'active', cx: 'stop it' });
      expect((await call('GET', `/v1/queues/${name}/jobs/${id}`)).body).toMatchObject({ state: 'active', cancelReason: 'stop it' });
      expect(await call('POST', `/v1/queues/${name}/jobs/${id}/cancel`)).toEqual({ status: 200, body: { id, state: 'cancelling' } });
      // the holder hears it at its renewal, and its settle, a completion here, ends it cancelled
      expect(await leases.extend([held!], 30_000)).toEqual([{ cancel: 'stop it' }]);
      expect((await leases.complete([{ id, token: held!.token }])).outcomes).toEqual(['cancelled']);
      expect(await rowOf(name, id)).toMatchObject({ s: 'cancelled', cx: 'stop it' });
      expect(await call('POST', `/v1/queues/${name}/jobs/${id}/cancel`)).toEqual({ status: 200, body: { id, state: 'cancelled' } });
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it('cancels a state’s jobs in bulk, by group, the ungrouped ones, or all, within a limit; lists, counts, gauges and cleans them', async () => {
      const name = q();
      const jobs = [
        { payload: 'u1' },
        { payload: 'u2' },
        { payload: 'a1', group: 'tenant-a' },
        { payload: 'a2', group: 'tenant-a' },
        { payload: 'b1', group: 'tenant-b' },
        { payload: 'b2', group: 'tenant-b' },
        { payload: 'b3', group: 'tenant-b' },
        { payload: 's1', delayMs: 60_000 },
        { payload: 's2', delayMs: 60_000, group: 'tenant-a' },
      ];
      const ids = ((await call('POST', `/v1/queues/${name}/jobs/bulk`, { jobs })).body.jobs as Array<{ id: string }>).map((j) => j.id);
      const idOf = (payload: string): string => ids[jobs.findIndex((j) => j.payload === payload)]!;
      const stateOfRow = (payload: string): Promise<string | null> => fx.raw.hget(`emq:{${name}}:job:${idOf(payload)}`, 's');

      const bulk = `/v1/queues/${name}/cancel`;
      expect(await call('POST', bulk, { state: 'pending', group: 'tenant-a', reason: 'tenant closed' })).toEqual({ status: 200, body: { cancelled: 2, cancelling: 0, more: false } });
      expect(await Promise.all(['a1', 'a2', 's2', 'u1', 'b1'].map(stateOfRow))).toEqual(['cancelled', 'cancelled', 'scheduled', 'pending', 'pending']);
      expect((await rowOf(name, idOf('a1'))).cx).toBe('tenant closed');
      expect(await call('POST', bulk, { state: 'pending', group: null })).toEqual({ status: 200, body: { cancelled: 2, cancelling: 0, more: false } });
      expect(await Promise.all(['u1', 'u2', 'b1'].map(stateOfRow))).toEqual(['cancelled', 'cancelled', 'pending']);
      expect(await call('POST', bulk, { state: 'pending', limit: 2 })).toEqual({ status: 200, body: { cancelled: 2, cancelling: 0, more: true } });
      expect(await call('POST', bulk, { state: 'pending' })).toEqual({ status: 200, body: { cancelled: 1, cancelling: 0, more: false } });
      expect(await call('POST', bulk, { state: 'scheduled', reason: 'not any more' })).toEqual({ status: 200, body: { cancelled: 2, cancelling: 0, more: false } });
      expect(await call('POST', bulk, { state: 'awaiting' })).toEqual({ status: 200, body: { cancelled: 0, cancelling: 0, more: false } });
      expect(await cancelledIds(name)).toHaveLength(9);

      // bad input: nothing written
      await refused(name, 400, 'EMQARG', bulk, { state: 'completed' });
      await refused(name, 400, 'EMQARG', bulk, {});
      await refused(name, 400, 'EMQARG', bulk, { state: 'pending', group: 'has space' });
      await refused(name, 400, 'EMQARG', bulk, { state: 'pending', limit: 0 });
      await refused(name, 400, 'EMQARG', bulk, { state: 'pending', reason: '' });
      await refused(name, 400, 'EMQARG', bulk, { state: 'pending', everything: true });

      // listed newest first, counted, gauged, cleaned
      const listed = await call('GET', `/v1/queues/${name}/jobs?state=cancelled&limit=3`);
      expect(listed.status).toBe(200);
      expect((listed.body.jobs as Array<{ state: string }>).map((j) => j.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
      expect((await call('GET', `/v1/queues/${name}`)).body).toMatchObject({ counts: { pending: 0, scheduled: 0, cancelled: 9 } });
      const metrics = await fetch(`${fx.target.baseUrl}/metrics`, { headers: fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {} });
      expect(await metrics.text()).toContain(`emq_jobs{queue="${name}",state="cancelled"} 9`);
      expect(await call('POST', `/v1/queues/${name}/clean`, { state: 'cancelled', limit: 4 })).toMatchObject({ status: 200, body: { more: true } });
      expect(await fx.raw.zcard(`emq:{${name}}:cancelled`)).toBe(5);
      const cleaned = await call('POST', `/v1/queues/${name}/clean`, { state: 'cancelled' });
      expect(cleaned).toMatchObject({ status: 200, body: { more: false } });
      expect(cleaned.body.ids).toHaveLength(5);
      expect(await fx.raw.exists(`emq:{${name}}:job:${idOf('b3')}`)).toBe(0);
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it('cancels the active jobs in bulk as cancelling: each ends cancelled at its settle', async () => {
      const name = q();
      const { queue, leases } = consumer(name);
      await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
      const { jobs } = await leases.claim(2, 30_000);
      expect(await call('POST', `/v1/queues/${name}/cancel`, { state: 'active', reason: 'shutting down' })).toEqual({ status: 200, body: { cancelled: 0, cancelling: 2, more: false } });
      expect((await queue.stats()).counts).toMatchObject({ active: 2, pending: 1, cancelled: 0 });
      await leases.fail(jobs.map((j) => ({ id: j.id, token: j.token, error: 'aborted' })));
      expect((await queue.stats()).counts).toMatchObject({ active: 0, pending: 1, dead: 0, cancelled: 2 });
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it('documents both routes and the cancelled state in the OpenAPI document', async () => {
      const doc = (await call('GET', '/v1/openapi.json')).body as {
        paths: Record<string, Record<string, { requestBody?: { required?: boolean }; responses: Record<string, unknown> }>>;
        components: { schemas: Record<string, { properties: Record<string, { enum?: string[]; $ref?: string }> }> };
      };
      const one = doc.paths['/v1/queues/{queue}/jobs/{id}/cancel'];
      expect(Object.keys(one ?? {})).toEqual(['post']);
      expect(one!.post!.requestBody?.required).toBe(false);
      expect(Object.keys(one!.post!.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
      expect(Object.keys(doc.paths['/v1/queues/{queue}/cancel'] ?? {})).toEqual(['post']);
      const { schemas } = doc.components;
      expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['Cancel', 'CancelJobs', 'CancelResult', 'CancelJobsResult']));
      expect(schemas.CancelJobs!.properties.state!.enum).toEqual(['pending', 'scheduled', 'active', 'waiting', 'awaiting']);
      expect(schemas.CancelResult!.properties.state!.enum).toEqual(['cancelled', 'cancelling']);
      expect(schemas.Job!.properties.state!.enum).toContain('cancelled');
      expect(Object.keys(schemas.Job!.properties)).toContain('cancelReason');
      expect(JSON.stringify(doc.paths['/v1/queues/{queue}/clean'])).toContain('"enum":["completed","dead","cancelled"]');
      expect(JSON.stringify(doc.paths['/v1/queues/{queue}']!.get!.responses['200'])).toContain('"cancelled":{"type":"integer"');
    });
  });
}
