import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Leases } from '../src/lease/leases.js';
import { type BulkJob, Queue } from '../src/queue/queue.js';
import { decodeEntry } from '../src/events/decode.js';
import type { ApiTarget } from './http-call.js';
import { asJson, useHttpFixture } from './http-fixture.js';

/** The payload cap by default: 1 MiB of UTF-8 JSON as stored. */
const PAYLOAD_CAP = 1024 * 1024;
/**
 * The enqueue route's body limit with the default cap: six times it (`\uXXXX` spells one stored
 * byte in six) and 64 KiB for the options.
 */
const ENQUEUE_BODY_LIMIT = 6 * PAYLOAD_CAP + 64 * 1024;
/** The bulk route's body limit (the contract's 10 MiB). */
const BULK_BODY_LIMIT = 10 * 1024 * 1024;

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
  headers: Headers;
}

/**
 * The HTTP contract of DESIGN.md, route by route, success and error paths, against any target.
 * `redisUrl` is the Redis behind the target: the suite reads state there to prove that rejected
 * requests write nothing.
 */
export function describeHttpApi(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http', redisUrl, start });
    const q = fx.queueName;

    async function call(
      method: string,
      path: string,
      body?: unknown,
      init: { auth?: string | null; raw?: string; headers?: Record<string, string> } = {},
    ): Promise<Answer> {
      const headers: Record<string, string> = { ...init.headers };
      const auth = init.auth === undefined ? fx.target.token : init.auth;
      if (auth) headers.Authorization = `Bearer ${auth}`;
      if (body !== undefined || init.raw !== undefined) headers['Content-Type'] = 'application/json';
      const res = await fetch(fx.target.baseUrl + path, {
        method,
        headers,
        ...(init.raw !== undefined ? { body: init.raw } : body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let parsed: Answer['body'] = {};
      try {
        parsed = text ? (JSON.parse(text) as Answer['body']) : {};
      } catch {
        parsed = { text };
      }
      return { status: res.status, body: parsed, headers: res.headers };
    }

    const keysOf = async (queue: string): Promise<string[]> => fx.raw.keys(`emq:{${queue}}:*`);

    /** The queue's keys, and whether the registry of queues holds its name. */
    const stateOf = async (queue: string): Promise<{ keys: string[]; registered: number }> => ({
      keys: (await keysOf(queue)).sort(),
      registered: await fx.raw.sismember('emq:queues', queue),
    });

    /** The request fails with `status` and `code`, and the queue's keyspace and registry entry are untouched. */
    async function refused(queue: string, status: number, code: string, method: string, path: string, body?: unknown, init?: { raw?: string }): Promise<void> {
      const before = await stateOf(queue);
      const answer = await call(method, path, body, init);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.body.error?.code).toBe(code);
      expect(typeof answer.body.error?.message).toBe('string');
      expect(await stateOf(queue)).toEqual(before);
    }

    /**
     * Sends only the head of a request whose Content-Length declares `bytes`, and reads the
     * answer: a server that refuses from the declared length answers without the body, and the
     * client is not still writing it when the server closes the connection (a race that makes a
     * plain fetch of a huge body fail now and then).
     */
    function declaredOnly(path: string, bytes: number): Promise<{ status: number; body: Answer['body'] }> {
      return new Promise((resolve, reject) => {
        const req = request(fx.target.baseUrl + path, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': String(bytes),
            ...(fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {}),
          },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] });
          });
        });
        req.flushHeaders();
      });
    }

    /**
     * Sends `chunks` as a chunked body (Transfer-Encoding: chunked, no Content-Length), the way
     * fetch sends a stream body.
     */
    async function chunkedCall(path: string, chunks: ReadonlyArray<string | Uint8Array>): Promise<Answer> {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
          controller.close();
        },
      });
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (fx.target.token) headers.Authorization = `Bearer ${fx.target.token}`;
      const res = await fetch(fx.target.baseUrl + path, { method: 'POST', headers, body, duplex: 'half' });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as Answer['body'], headers: res.headers };
    }

    /**
     * Streams `bytes` bytes of a chunked body that never ends, and reads the answer. Exactly one byte
     * over a limit, then silence: the server has read every byte sent when it answers, so it closes
     * a connection with nothing left unread (no reset that could cost the client the answer), and
     * the client is not writing when it does.
     */
    function chunkedOnly(path: string, bytes: number): Promise<{ status: number; body: Answer['body'] }> {
      return new Promise((resolve, reject) => {
        let answered = false;
        const req = request(fx.target.baseUrl + path, {
          method: 'POST',
          agent: false,
          headers: { 'Content-Type': 'application/json', ...(fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {}) },
        });
        req.on('error', (error) => (answered ? undefined : reject(error)));
        req.on('response', (res) => {
          answered = true;
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (part: string) => (text += part));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] });
          });
        });
        const chunk = Buffer.alloc(64 * 1024, ' ');
        const write = (left: number): void => {
          if (answered || left === 0) return;
          const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
          if (req.write(part)) setImmediate(() => write(left - part.length));
          else req.once('drain', () => write(left - part.length));
        };
        write(bytes);
      });
    }

    it('answers /healthz without a token', async () => {
      const answer = await call('GET', '/healthz', undefined, { auth: null });
      expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    });

    it('enqueues one job, and the same id again is a duplicate that writes nothing', async () => {
      const queue = q();
      const created = await call('POST', `/v1/queues/${queue}/jobs`, { payload: { to: 'a@example.com' }, id: 'order-1', group: 'tenant-1', priority: 3, maxAttempts: 5, backoffMs: 250 });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: 'JOB:order-1', state: 'pending' });
      expect(created.headers.get('x-request-id')).toBeTruthy();
      const again = await call('POST', `/v1/queues/${queue}/jobs`, { payload: { other: true }, id: 'order-1' });
      expect(again).toMatchObject({ status: 200, body: { id: 'JOB:order-1', state: 'duplicate' } });
      const job = await call('GET', `/v1/queues/${queue}/jobs/JOB:order-1`);
      expect(job.status).toBe(200);
      expect(job.body).toMatchObject({ id: 'JOB:order-1', state: 'pending', payload: { to: 'a@example.com' }, group: 'tenant-1', priority: 3, maxAttempts: 5, attempt: 0, attemptsStarted: 0, backoff: { type: 'fixed', delayMs: 250 } });
      expect(await fx.raw.zcard(`emq:{${queue}}:lane:tenant-1`)).toBe(1);
    });

    it('takes an Idempotency-Key: the same key again answers the first response and writes nothing', async () => {
      const queue = q();
      const key = { headers: { 'Idempotency-Key': 'signup-42' } };
      const first = await call('POST', `/v1/queues/${queue}/jobs`, { payload: { to: 'a' } }, key);
      expect(first).toMatchObject({ status: 201, body: { id: 'JOB:1', state: 'pending' } });
      const keys = await keysOf(queue);
      // a client retrying after a timeout or a 503 it could not read
      expect(await call('POST', `/v1/queues/${queue}/jobs`, { payload: { to: 'a' } }, key)).toMatchObject({ status: 201, body: { id: 'JOB:1', state: 'pending' } });
      expect(await call('POST', `/v1/queues/${queue}/jobs`, { payload: { to: 'b' } }, key)).toMatchObject({ status: 409, body: { error: { code: 'EMQCONFLICT' } } });
      expect((await keysOf(queue)).sort()).toEqual(keys.sort());
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ counts: { pending: 1 } });
      const bulk = { headers: { 'Idempotency-Key': 'import-1' } };
      const jobs = { jobs: [{ payload: 1 }, { payload: 2 }] };
      const created = await call('POST', `/v1/queues/${queue}/jobs/bulk`, jobs, bulk);
      expect(created.status).toBe(201);
      expect(await call('POST', `/v1/queues/${queue}/jobs/bulk`, jobs, bulk)).toEqual({ ...created, headers: expect.anything() as unknown });
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ counts: { pending: 3 } });
      const bad = await call('POST', `/v1/queues/${queue}/jobs`, { payload: 1 }, { headers: { 'Idempotency-Key': 'no spaces' } });
      expect(bad).toMatchObject({ status: 400, body: { error: { code: 'EMQARG' } } });
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ counts: { pending: 3 } });
    });

    it('schedules delayed and run-at jobs', async () => {
      const queue = q();
      expect((await call('POST', `/v1/queues/${queue}/jobs`, { payload: 1, delayMs: 60_000 })).body).toMatchObject({ state: 'scheduled' });
      const at = new Date(Date.now() + 3_600_000).toISOString();
      expect((await call('POST', `/v1/queues/${queue}/jobs`, { payload: 2, runAt: at })).body).toMatchObject({ state: 'scheduled' });
      expect((await call('POST', `/v1/queues/${queue}/jobs`, { payload: 3, runAt: 0 })).body).toMatchObject({ state: 'pending' });
      const stats = await call('GET', `/v1/queues/${queue}`);
      expect(stats).toMatchObject({ status: 200, body: { queue, paused: false, counts: { pending: 1, scheduled: 2, active: 0, dead: 0, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 } } });
    });

    it('takes a job’s own timeoutMs on both enqueue routes and shows it on the job; a bad one is a 400 that writes nothing', async () => {
      const queue = q();
      const one = await call('POST', `/v1/queues/${queue}/jobs`, { payload: 1, timeoutMs: 2_500 });
      expect(one.status).toBe(201);
      const bulk = await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 2, timeoutMs: 100 }, { payload: 3 }] });
      const ids = [(one.body as { id: string }).id, ...(bulk.body as { jobs: Array<{ id: string }> }).jobs.map((j) => j.id)];
      const views = await Promise.all(ids.map(async (id) => (await call('GET', `/v1/queues/${queue}/jobs/${id}`)).body as { timeoutMs?: number }));
      expect(views.map((v) => v.timeoutMs)).toEqual([2_500, 100, undefined]);
      for (const timeoutMs of [0, -5, 1.5, '9']) {
        const bad = await call('POST', `/v1/queues/${queue}/jobs`, { payload: 4, timeoutMs });
        expect(bad.status, String(timeoutMs)).toBe(400);
      }
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ counts: { pending: 3 } });
    });

    it('takes an expiry (expireAfterMs, expireAt as ms or ISO text) and shows it on the job; a bad one is a 400 that writes nothing', async () => {
      const queue = q();
      const one = await call('POST', `/v1/queues/${queue}/jobs`, { payload: 1, expireAfterMs: 60_000 });
      expect(one.status).toBe(201);
      const at = Date.now() + 120_000;
      const bulk = await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 2, expireAt: at }, { payload: 3, expireAt: new Date(at).toISOString() }] });
      expect(bulk.status).toBe(201);
      const ids = [(one.body as { id: string }).id, ...(bulk.body as { jobs: Array<{ id: string }> }).jobs.map((j) => j.id)];
      const views = await Promise.all(ids.map(async (id) => (await call('GET', `/v1/queues/${queue}/jobs/${id}`)).body as { expiresAt?: number; createdAt: number }));
      expect(views[0]!.expiresAt! - views[0]!.createdAt).toBe(60_000);
      expect(views.slice(1).map((v) => v.expiresAt)).toEqual([at, at]);
      for (const body of [{ expireAfterMs: 0 }, { expireAfterMs: 1.5 }, { expireAt: -1 }, { expireAt: 'soon' }, { expireAfterMs: 10, expireAt: at }]) {
        const bad = await call('POST', `/v1/queues/${queue}/jobs`, { payload: 4, ...body });
        expect(bad.status, JSON.stringify(body)).toBe(400);
      }
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ counts: { pending: 3 } });
    });

    it('enqueues in bulk, up to 1000', async () => {
      const queue = q();
      const bulk = await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 1 }, { payload: 2, group: 'g' }, { payload: 3, delayMs: 1000 }] });
      expect(bulk.status).toBe(201);
      expect(bulk.body).toEqual({ jobs: [{ id: 'JOB:1', state: 'pending' }, { id: 'JOB:2', state: 'pending' }, { id: 'JOB:3', state: 'scheduled' }] });
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: Array.from({ length: 1001 }, (_, i) => ({ payload: i })) });
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [] });
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 1 }, { payload: 2, delayMs: -1 }] });
      // the earlier nested options of addBulk were never the HTTP shape
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 1, options: { group: 'g' } }] });
    });

    it('takes dedupe on both enqueue routes: a duplicate and a replace answer 200 with the holder, a bad one is a 400 that writes nothing', async () => {
      const queue = q();
      const path = `/v1/queues/${queue}/jobs`;
      const created = await call('POST', path, { payload: { v: 1 }, delayMs: 60_000, dedupe: { key: 'doc:7' } });
      expect(created).toMatchObject({ status: 201, body: { id: 'JOB:1', state: 'scheduled' } });
      expect(await call('POST', path, { payload: { v: 2 }, dedupe: { key: 'doc:7' } })).toMatchObject({ status: 200, body: { id: 'JOB:1', state: 'duplicate' } });
      const replaced = await call('POST', path, { payload: { v: 3 }, delayMs: 120_000, dedupe: { key: 'doc:7', replace: true } });
      expect(replaced).toMatchObject({ status: 200, body: { id: 'JOB:1', state: 'replaced' } });
      expect((await call('GET', `${path}/JOB:1`)).body).toMatchObject({ state: 'scheduled', payload: { v: 3 } });
      expect(await fx.raw.get(`emq:{${queue}}:dd:doc:7`)).toBe('JOB:1');

      const bulk = await call('POST', `${path}/bulk`, {
        jobs: [
          { payload: 'a', dedupe: { key: 'k', ttlMs: 60_000 } },
          { payload: 'b', dedupe: { key: 'k' } },
          { payload: 'c', dedupe: { key: 'k', replace: true } },
          { payload: 'd', dedupe: { key: 'doc:7' } },
        ],
      });
      expect(bulk.status).toBe(201);
      const [first] = (bulk.body.jobs as Array<{ id: string }>);
      expect(bulk.body.jobs).toEqual([
        { id: first!.id, state: 'pending' },
        { id: first!.id, state: 'duplicate' },
        { id: first!.id, state: 'replaced' },
        { id: 'JOB:1', state: 'duplicate' },
      ]);
      expect((await call('GET', `${path}/${first!.id}`)).body).toMatchObject({ state: 'pending', payload: 'c' });

      for (const dedupe of [{}, { key: '' }, { key: 'x'.repeat(257) }, { key: 'a\tb' }, { key: 'k', ttlMs: 0 }, { key: 'k', ttlMs: 1.5 }, { key: 'k', replace: 1 }, { key: 'k', extend: true }, 'k']) {
        await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, dedupe });
        await refused(queue, 400, 'EMQARG', 'POST', `${path}/bulk`, { jobs: [{ payload: 1 }, { payload: 2, dedupe }] });
      }
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, id: 'mine', dedupe: { key: 'k' } });
    });

    it('speaks the TypeScript shapes: a BulkJob as JSON is a bulk job, the replies are EnqueueResult and JobRecord as JSON', async () => {
      const queue = q();
      const runAt = new Date(Date.now() + 3_600_000);
      const jobs: Array<BulkJob<{ to: string }>> = [
        { payload: { to: 'a' }, id: 'a', group: 'tenant-1', priority: 2, maxAttempts: 5, backoff: 250 },
        { payload: { to: 'b' }, runAt, backoff: { type: 'exponential', delayMs: 100, maxDelayMs: 1000, jitter: 0 } },
        { payload: { to: 'a again' }, id: 'a' },
      ];
      const bulk = await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs });
      expect(bulk.status).toBe(201);
      // the same jobs through addBulk, on a queue of their own: the same results
      const { transport } = fx;
      const twin = new Queue<{ to: string }>(transport, q());
      const results = await twin.addBulk(jobs);
      expect(bulk.body).toEqual({ jobs: results });
      expect(results.map((r) => r.state)).toEqual(['pending', 'scheduled', 'duplicate']);
      // a job read back: the HTTP body is the JobRecord as JSON
      const mine = new Queue<{ to: string }>(transport, queue);
      for (const { id } of results.slice(0, 2)) {
        const viaHttp = await call('GET', `/v1/queues/${queue}/jobs/${id}`);
        expect(viaHttp.body).toEqual(JSON.parse(JSON.stringify(await mine.getJob(id))));
      }
      expect((await call('GET', `/v1/queues/${queue}/jobs/a`)).body).toMatchObject({ backoff: { type: 'fixed', delayMs: 250 }, attempt: 0, attemptsStarted: 0 });
      // one job: the same EnqueueResult as `add`
      expect((await call('POST', `/v1/queues/${queue}/jobs`, { payload: { to: 'c' }, id: 'a' })).body).toEqual(await mine.add({ to: 'c' }, { id: 'a' }));
    });

    it("shows a job's result and progress: GET job is the JobRecord as JSON, each left out when there is none", async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 'r', id: 'with-result' });
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 'p', id: 'running' });
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 'n', id: 'nothing' });
      const { transport } = fx;
      const consumerSide = new Queue(transport, queue);
      const lease = new Leases(consumerSide);
      const held = (await lease.claim(3, 30_000)).jobs;
      expect(held.map((j) => j.id)).toEqual(['JOB:with-result', 'JOB:running', 'JOB:nothing']);
      const [withResult, running, nothing] = held as [(typeof held)[0], (typeof held)[0], (typeof held)[0]];
      expect(await lease.progress([withResult, running], { step: 'héllo ✓', pct: 50 })).toEqual([true, true]);
      expect(await lease.progress([running], 75)).toEqual([true]);
      await lease.complete([{ id: withResult.id, token: withResult.token, result: JSON.stringify({ sent: [1, 'two', null] }) }, nothing]);

      const done = await call('GET', `/v1/queues/${queue}/jobs/with-result`);
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ state: 'completed', result: { sent: [1, 'two', null] }, progress: { step: 'héllo ✓', pct: 50 } });
      const active = await call('GET', `/v1/queues/${queue}/jobs/running`);
      expect(active.body).toMatchObject({ state: 'active', progress: 75 });
      expect(active.body).not.toHaveProperty('result');
      const bare = await call('GET', `/v1/queues/${queue}/jobs/nothing`);
      expect(bare.body).toMatchObject({ state: 'completed' });
      expect(bare.body).not.toHaveProperty('result');
      expect(bare.body).not.toHaveProperty('progress');
      for (const [id, answer] of [['JOB:with-result', done], ['JOB:running', active], ['JOB:nothing', bare]] as const) {
        expect(answer.body).toEqual(JSON.parse(JSON.stringify(await consumerSide.getJob(id))));
      }
      // the completed page shows them the same way
      const page = await call('GET', `/v1/queues/${queue}/jobs?state=completed`);
      expect(page.body.jobs).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'JOB:with-result', result: { sent: [1, 'two', null] } })]));
      const schemas = (await call('GET', '/v1/openapi.json')).body as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
      expect(Object.keys(schemas.components.schemas.Job!.properties)).toEqual(expect.arrayContaining(['result', 'progress']));
    });

    it('GET job is the JobRecord as JSON, every field getJob has, for a plain job, a fired job, a flow parent and its children; so are the listings', async () => {
      const [queue, other] = [q(), q()];
      const mine = fx.queueOf(queue);
      const theirs = fx.queueOf(other);
      expect((await call('POST', `/v1/queues/${queue}/jobs`, { payload: { to: 'a' }, id: 'plain', group: 'g', priority: 2, maxAttempts: 3, backoff: 100 })).status).toBe(201);
      const { body: tick } = await call('PUT', `/v1/queues/${queue}/schedulers/tick`, { every: 60_000, limit: 1, job: { payload: { n: 1 } } });
      // a consumer's beat fires the first slot, due at once
      expect((await new Leases(mine).beat({ n: 0, leaseMs: 30_000 })).fired).toBe(1);
      const fired = `JOB:tick@${tick.nextRunAt as number}`;
      const flow = await call('POST', '/v1/flows', {
        queue,
        id: 'report',
        payload: { report: 1 },
        children: [
          { queue: other, payload: 'page' },
          { queue: other, payload: 'bad', maxAttempts: 1, onFailure: 'ignore' },
          { queue, payload: 'left' },
        ],
      });
      expect(flow.status, JSON.stringify(flow.body)).toBe(201);
      // one child completed with a result, one dead, one unfinished: the parent waits, and shows each
      const leases = new Leases(theirs);
      const [page, bad] = (await leases.claim(2, 30_000)).jobs;
      await leases.complete([{ id: page!.id, token: page!.token, result: JSON.stringify({ pages: 3 }) }]);
      await leases.fail([{ id: bad!.id, token: bad!.token, error: 'boom' }]);

      const jobs: Array<[string, string]> = [
        [queue, 'JOB:plain'],
        [queue, fired],
        [queue, 'JOB:report'],
        [other, 'JOB:report.0'],
        [other, 'JOB:report.1'],
        [queue, 'JOB:report.2'],
      ];
      const records = new Map<string, unknown>();
      for (const [name, id] of jobs) {
        const record = await fx.queueOf(name).getJob(id);
        records.set(id, asJson(record));
        const answer = await call('GET', `/v1/queues/${name}/jobs/${id}`);
        expect(answer.status, id).toBe(200);
        expect(answer.body, id).toEqual(asJson(record));
      }
      // what the comparison covers: the scheduler, the parent's children and count, each child's parent
      expect(records.get(fired)).toMatchObject({ scheduler: { id: 'tick' } });
      expect(records.get('JOB:report')).toMatchObject({
        state: 'waiting',
        children: [
          { queue: other, id: 'JOB:report.0', state: 'completed', result: { pages: 3 } },
          { queue: other, id: 'JOB:report.1', state: 'failed', error: 'boom' },
          { queue, id: 'JOB:report.2', state: 'unfinished' },
        ],
        flow: { total: 3, done: 2 },
      });
      for (const id of ['JOB:report.0', 'JOB:report.1', 'JOB:report.2']) {
        expect(records.get(id), id).toMatchObject({ parent: { queue, id: 'JOB:report', onFailure: expect.any(String) } });
      }
      // a state's page and the dead page are getJobs and listDead as JSON
      const waiting = await mine.getJobs('waiting');
      expect(waiting.map((j) => j.id)).toEqual(['JOB:report']);
      expect((await call('GET', `/v1/queues/${queue}/jobs?state=waiting`)).body.jobs).toEqual(asJson(waiting));
      expect((await call('GET', `/v1/queues/${other}/jobs?state=completed`)).body.jobs).toEqual([records.get('JOB:report.0')]);
      expect((await call('GET', `/v1/queues/${other}/dead`)).body.jobs).toEqual([records.get('JOB:report.1')]);
      expect((await call('GET', `/v1/queues/${other}/dead`)).body.jobs).toEqual(asJson(await theirs.listDead()));
    });

    /** Every event the queue's stream holds (XRANGE), as JSON would show them. */
    async function streamEvents(queue: string): Promise<unknown[]> {
      const entries = await fx.raw.xrange(`emq:{${queue}}:events`, '-', '+');
      return JSON.parse(JSON.stringify(entries.flatMap(([id, fields]) => decodeEntry(id, fields).events))) as unknown[];
    }

    it('pages through the events: whole entries after `after`, `next` to go on, and 400 EMQARG for a bad after or limit', async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 1, id: 'a' }, { payload: 2, id: 'b', delayMs: 60_000 }] });
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 3, id: 'c', group: 'g' });
      const all = await call('GET', `/v1/queues/${queue}/events?after=0`);
      expect(all.status).toBe(200);
      expect(all.body.events).toEqual(await streamEvents(queue));
      expect((all.body.events as Array<{ event: string }>).map((e) => e.event)).toEqual(['added', 'scheduled', 'added']);
      const [first, , third] = all.body.events as Array<{ id: string }>;
      expect(all.body.next).toBe(third!.id);
      // a limit of 1 still takes the whole first entry (two events), never half of it
      const page = await call('GET', `/v1/queues/${queue}/events?limit=1`);
      expect(page.body).toEqual({ events: (all.body.events as unknown[]).slice(0, 2), next: first!.id });
      const rest = await call('GET', `/v1/queues/${queue}/events?after=${first!.id}&limit=1`);
      expect(rest.body).toEqual({ events: (all.body.events as unknown[]).slice(2), next: third!.id });
      expect((await call('GET', `/v1/queues/${queue}/events?after=${third!.id}`)).body).toEqual({ events: [], next: third!.id });
      for (const query of ['after=x', 'after=1-', 'after=99999999999999999999999-0', 'limit=0', 'limit=1001', 'limit=ten', 'from=0']) {
        const answer = await call('GET', `/v1/queues/${queue}/events?${query}`);
        expect(answer.status, query).toBe(400);
        expect(answer.body.error?.code, query).toBe('EMQARG');
      }
    });

    it('?wait answers the outcome: 200 completed with the result, 200 dead with the error, 202 with the state when it did not finish', async () => {
      const queue = q();
      const { transport } = fx;
      const lease = new Leases(new Queue(transport, queue));
      /** Claims the next job as soon as there is one. */
      const claimNext = async () => {
        for (;;) {
          const [job] = (await lease.claim(1, 30_000)).jobs;
          if (job) return job;
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      const waiting = call('POST', `/v1/queues/${queue}/jobs?wait=10000`, { payload: 1, id: 'ok' });
      const ok = await claimNext();
      await lease.complete([{ id: ok.id, token: ok.token, result: JSON.stringify({ sent: true }) }]);
      expect(await waiting).toMatchObject({ status: 200, body: { id: 'JOB:ok', state: 'completed', result: { sent: true } } });
      // finished already: a duplicate with ?wait answers from the row at once
      expect(await call('POST', `/v1/queues/${queue}/jobs?wait=0`, { payload: 9, id: 'ok' })).toMatchObject({
        status: 200,
        body: { id: 'JOB:ok', state: 'completed', result: { sent: true } },
      });
      const dying = call('POST', `/v1/queues/${queue}/jobs?wait=10000`, { payload: 2, id: 'dies' });
      const dies = await claimNext();
      await lease.fail([{ id: dies.id, token: dies.token, error: 'boom' }]);
      expect(await dying).toMatchObject({ status: 200, body: { id: 'JOB:dies', state: 'dead', error: 'boom' } });
      expect(await call('POST', `/v1/queues/${queue}/jobs?wait=50`, { payload: 3, id: 'slow' })).toMatchObject({ status: 202, body: { id: 'JOB:slow', state: 'pending' } });
      expect(await call('POST', `/v1/queues/${queue}/jobs?wait=50`, { payload: 4, id: 'later', delayMs: 60_000 })).toMatchObject({ status: 202, body: { id: 'JOB:later', state: 'scheduled' } });
      const other = q();
      for (const wait of ['30001', '-1', 'soon', '1.5']) await refused(other, 400, 'EMQARG', 'POST', `/v1/queues/${other}/jobs?wait=${wait}`, { payload: 1 });
    });

    /** The SSE messages of `text` that arrived whole (a blank line ends each), in order; comment lines (heartbeats) left out. */
    const sseMessages = (text: string): Array<{ id?: string; event?: string; data: string }> =>
      text
        .split('\n\n')
        .slice(0, -1)
        .filter((block) => !block.split('\n').every((line) => line.startsWith(':')))
        .map((block) => {
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            const at = line.indexOf(':');
            if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, '');
          }
          return { ...fields, data: fields.data ?? '' };
        });

    /** Opens the SSE route and reads until `enough` holds of the text so far, then drops the connection. */
    async function readStream(path: string, enough: (text: string) => boolean, headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; text: string }> {
      const stop = new AbortController();
      const res = await fetch(fx.target.baseUrl + path, {
        headers: { ...headers, ...(fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {}) },
        signal: stop.signal,
      });
      if (res.status !== 200) return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      try {
        while (!enough(text)) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
      } finally {
        stop.abort();
        await reader.cancel().catch(() => {});
      }
      return { status: res.status, type: res.headers.get('content-type'), text };
    }

    it('streams the events as SSE, one message an entry; a resume with Last-Event-ID after a drop inside an entry loses and repeats nothing', async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [1, 2, 3].map((payload) => ({ payload })) });
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 4 });
      await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [5, 6].map((payload) => ({ payload })) });
      await call('POST', `/v1/queues/${queue}/pause`);
      const expected = await streamEvents(queue);
      // the first read: until the third message has begun, then cut inside it, as a connection
      // dropped there would leave it; an EventSource keeps the id of the last whole message
      const first = await readStream(`/v1/queues/${queue}/events/stream?after=0`, (text) => sseMessages(text).length >= 3);
      expect(first.status).toBe(200);
      expect(first.type).toMatch(/^text\/event-stream/);
      const whole = sseMessages(first.text);
      const third = first.text.indexOf('\n\n', first.text.indexOf('\n\n') + 2) + 2;
      const cut = first.text.slice(0, third + Math.floor((first.text.indexOf('\n\n', third) - third) / 2));
      const kept = sseMessages(cut);
      expect(kept).toHaveLength(2);
      expect(kept.every((m) => m.event === 'events')).toBe(true);
      expect(whole[0]!.id).toMatch(/^\d+-\d+$/);
      const got = kept.flatMap((m) => JSON.parse(m.data) as unknown[]);
      // resume: the header wins over ?after
      const second = await readStream(`/v1/queues/${queue}/events/stream?after=0`, (text) => {
        const events = sseMessages(text).flatMap((m) => JSON.parse(m.data) as unknown[]);
        return got.length + events.length >= expected.length;
      }, { 'Last-Event-ID': kept.at(-1)!.id! });
      got.push(...sseMessages(second.text).flatMap((m) => JSON.parse(m.data) as unknown[]));
      expect(got).toEqual(expected);
      // each message is one entry: its events share its id
      for (const m of [...kept, ...sseMessages(second.text)]) {
        for (const e of JSON.parse(m.data) as Array<{ id: string }>) expect(e.id).toBe(m.id);
      }
      await refused(queue, 400, 'EMQARG', 'GET', `/v1/queues/${queue}/events/stream?after=nope`);
      const badHeader = await readStream(`/v1/queues/${queue}/events/stream`, () => true, { 'Last-Event-ID': 'nope' });
      expect(badHeader.status).toBe(400);
    });

    it('refuses bad input with 400 and writes nothing', async () => {
      const queue = q();
      const path = `/v1/queues/${queue}/jobs`;
      await refused(queue, 400, 'EMQARG', 'POST', path, undefined, { raw: '{not json' });
      await refused(queue, 400, 'EMQARG', 'POST', path, {});
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, delayMs: -5 });
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, maxAttempts: 0 });
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, priority: 1.5 });
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, delayMs: 5, runAt: 5 });
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, group: 'has space' });
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, id: 'a/b' });
      // passes the id's pattern, but the scripts' kind door refuses a bare JOB:
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, id: 'JOB:' });
      await refused(queue, 400, 'EMQARG', 'POST', `${path}/bulk`, { jobs: [{ payload: 1 }, { payload: 2, id: 'JOB:' }] });
      await refused(queue, 400, 'EMQARG', 'POST', path, { payload: 1, unknownField: true });
      await refused(queue, 400, 'EMQARG', 'POST', '/v1/queues/bad%20name/jobs', { payload: 1 });
      await refused(queue, 400, 'EMQARG', 'PUT', `/v1/queues/${queue}/groups/g/limit`, { limit: -1 });
      await refused(queue, 400, 'EMQARG', 'PUT', `/v1/queues/${queue}/groups/g/limit`, {});
      await refused(queue, 400, 'EMQARG', 'GET', `/v1/queues/${queue}/dead?limit=0`);
    });

    it('takes a chunked body (no Content-Length) on both enqueue routes', async () => {
      const queue = q();
      const one = await chunkedCall(`/v1/queues/${queue}/jobs`, ['{"payload":', '{"to":"a@example.com"', '},"id":"chunked-1"}']);
      expect(one.status, JSON.stringify(one.body)).toBe(201);
      expect(one.body).toEqual({ id: 'JOB:chunked-1', state: 'pending' });
      expect((await call('GET', `/v1/queues/${queue}/jobs/chunked-1`)).body).toMatchObject({ payload: { to: 'a@example.com' } });
      // a character cut in two between chunks reads whole
      const text = new TextEncoder().encode('{"jobs":[{"payload":1},{"payload":"中文 ✓"}]}');
      const cut = text.indexOf(0xe4) + 1;
      const bulk = await chunkedCall(`/v1/queues/${queue}/jobs/bulk`, [text.slice(0, cut), text.slice(cut)]);
      expect(bulk).toMatchObject({ status: 201, body: { jobs: [{ state: 'pending' }, { state: 'pending' }] } });
      const [, second] = bulk.body.jobs as Array<{ id: string }>;
      expect((await call('GET', `/v1/queues/${queue}/jobs/${second!.id}`)).body).toMatchObject({ payload: '中文 ✓' });
      // read whole, then judged like any other body
      const bad = await chunkedCall(`/v1/queues/${queue}/jobs`, ['{"payload":1,', '"delayMs":-1}']);
      expect(bad).toMatchObject({ status: 400, body: { error: { code: 'EMQARG' } } });
      const malformed = await chunkedCall(`/v1/queues/${queue}/jobs`, ['{"payload":', '1']);
      expect(malformed).toMatchObject({ status: 400, body: { error: { code: 'EMQARG' } } });
    });

    it('reads, removes and reprocesses jobs, with 404 and 409 where they fit', async () => {
      const queue = q();
      await refused(queue, 404, 'EMQNOTFOUND', 'GET', `/v1/queues/${queue}/jobs/nope`);
      await refused(queue, 404, 'EMQNOTFOUND', 'DELETE', `/v1/queues/${queue}/jobs/nope`);
      await refused(queue, 404, 'EMQNOTFOUND', 'POST', `/v1/queues/${queue}/jobs/nope/reprocess`);
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 'p', id: 'p1' });
      await refused(queue, 409, 'EMQSTATE', 'POST', `/v1/queues/${queue}/jobs/p1/reprocess`);
      const removed = await call('DELETE', `/v1/queues/${queue}/jobs/p1`);
      expect(removed).toMatchObject({ status: 200, body: { id: 'JOB:p1', removed: true } });
      expect(await fx.raw.exists(`emq:{${queue}}:job:JOB:p1`)).toBe(0);
      await refused(queue, 404, 'EMQNOTFOUND', 'DELETE', `/v1/queues/${queue}/jobs/p1`);

      // a dead job, made the way a consumer would: claim it and fail it for good
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 'd', id: 'd1', maxAttempts: 1 });
      const { transport } = fx;
      const consumerSide = new Queue(transport, queue);
      const [held] = (await new Leases(consumerSide).claim(1, 30_000)).jobs;
      expect(await new Leases(consumerSide).fail([{ id: held!.id, token: held!.token, error: 'boom' }])).toEqual(['dead']);
      const dead = await call('GET', `/v1/queues/${queue}/dead?limit=10`);
      expect(dead.status).toBe(200);
      expect(dead.body.jobs).toMatchObject([{ id: 'JOB:d1', state: 'dead', error: 'boom', payload: 'd', attempt: 1, maxAttempts: 1, attemptsStarted: 1 }]);
      const again = await call('POST', `/v1/queues/${queue}/jobs/d1/reprocess`);
      expect(again).toMatchObject({ status: 200, body: { id: 'JOB:d1', state: 'pending' } });
      expect(await fx.raw.zscore(`emq:{${queue}}:pending`, 'JOB:d1')).not.toBeNull();
      // one meaning each: `attempt` is this run's (none yet since the reprocess), `attemptsStarted` every claim
      const reprocessed = await call('GET', `/v1/queues/${queue}/jobs/d1`);
      expect(reprocessed.body).toMatchObject({ state: 'pending', attempt: 0, maxAttempts: 1, attemptsStarted: 1 });
      expect(reprocessed.body).not.toHaveProperty('attempts');
    });

    it('pauses and resumes the queue and a group, and sets and lifts a limit', async () => {
      const queue = q();
      expect(await call('POST', `/v1/queues/${queue}/pause`)).toMatchObject({ status: 200, body: { queue, paused: true } });
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ paused: true });
      expect(await call('POST', `/v1/queues/${queue}/resume`)).toMatchObject({ status: 200, body: { queue, paused: false } });
      expect(await call('POST', `/v1/queues/${queue}/groups/g1/pause`)).toMatchObject({ status: 200, body: { queue, group: 'g1', paused: true } });
      expect(await fx.raw.sismember(`emq:{${queue}}:gpaused`, 'g1')).toBe(1);
      expect(await call('POST', `/v1/queues/${queue}/groups/g1/resume`)).toMatchObject({ status: 200, body: { paused: false } });
      expect(await fx.raw.sismember(`emq:{${queue}}:gpaused`, 'g1')).toBe(0);
      expect(await call('PUT', `/v1/queues/${queue}/groups/g1/limit`, { limit: 2 })).toMatchObject({ status: 200, body: { queue, group: 'g1', limit: 2 } });
      expect(await fx.raw.hget(`emq:{${queue}}:glimit`, 'g1')).toBe('2');
      expect(await call('PUT', `/v1/queues/${queue}/groups/g1/limit`, { limit: null })).toMatchObject({ status: 200, body: { limit: null } });
      expect(await fx.raw.hexists(`emq:{${queue}}:glimit`, 'g1')).toBe(0);
    });

    it('lists every queue of the registry, sorted by name, with the counts and paused flag its stats route gives', async () => {
      const [a, b] = [q(), q()].sort();
      if (!a || !b) throw new Error('two names');
      // a: waiting to run; b: one job in each of active, completed and dead, made the way a consumer would
      await call('POST', `/v1/queues/${a}/jobs/bulk`, { jobs: [{ payload: 1 }, { payload: 2, group: 'g' }, { payload: 3, delayMs: 60_000 }] });
      await call('POST', `/v1/queues/${b}/jobs/bulk`, { jobs: [{ payload: 'dies', maxAttempts: 1 }, { payload: 'completes' }, { payload: 'runs' }] });
      const { transport } = fx;
      const leases = new Leases(new Queue(transport, b));
      const [dies, completes] = (await leases.claim(3, 60_000)).jobs;
      expect(await leases.fail([{ id: dies!.id, token: dies!.token, error: 'boom' }])).toEqual(['dead']);
      await leases.complete([completes!]);

      const listed = async (): Promise<Array<Record<string, unknown> & { queue: string }>> => {
        const answer = await call('GET', '/v1/queues');
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(Object.keys(answer.body)).toEqual(['queues']);
        return answer.body.queues as Array<Record<string, unknown> & { queue: string }>;
      };
      const rows = await listed();
      const names = rows.map((row) => row.queue);
      // the registry's order: by name, byte by byte (Lua's table.sort)
      expect(names).toEqual([...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
      expect(names.indexOf(a)).toBeGreaterThanOrEqual(0);
      expect(names.indexOf(a)).toBeLessThan(names.indexOf(b));
      const rowOf = (name: string) => rows.find((row) => row.queue === name);
      for (const name of [a, b]) {
        const { queue, paused, counts } = (await call('GET', `/v1/queues/${name}`)).body;
        expect(Object.keys(rowOf(name)!).sort()).toEqual(['counts', 'deadTotal', 'firedTotal', 'lastHour', 'paused', 'queue', 'rateLimitedTotal', 'retriedTotal', 'stalledTotal']);
        expect(rowOf(name)).toMatchObject({ queue, paused, counts });
      }
      expect(rowOf(a)).toEqual({
        queue: a,
        paused: false,
        counts: { pending: 2, scheduled: 1, active: 0, dead: 0, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 },
        deadTotal: 0,
        retriedTotal: 0,
        stalledTotal: 0,
        firedTotal: 0,
        rateLimitedTotal: 0,
        lastHour: { minute: expect.any(Number), completed: new Array(60).fill(0), dead: new Array(60).fill(0) },
      });
      expect(rowOf(b)).toEqual({
        queue: b,
        paused: false,
        counts: { pending: 0, scheduled: 0, active: 1, dead: 1, completed: 1, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 },
        deadTotal: 1,
        retriedTotal: 0,
        stalledTotal: 0,
        firedTotal: 0,
        rateLimitedTotal: 0,
        lastHour: { minute: expect.any(Number), completed: expect.any(Array), dead: expect.any(Array) },
      });
      // b's completed job and its dead one, each in the minute it settled: the last or, across a minute's turn, the one before
      const hour = rowOf(b)!.lastHour as { completed: number[]; dead: number[] };
      expect([hour.completed.length, hour.dead.length]).toEqual([60, 60]);
      expect([hour.completed.slice(58), hour.dead.slice(58)].map((last) => last[0]! + last[1]!)).toEqual([1, 1]);

      await call('POST', `/v1/queues/${b}/pause`);
      const after = await listed();
      expect(after.find((row) => row.queue === a)).toMatchObject({ paused: false });
      expect(after.find((row) => row.queue === b)).toMatchObject({ paused: true, counts: { active: 1, dead: 1, completed: 1 } });
      expect((await call('GET', `/v1/queues/${b}`)).body).toMatchObject({ paused: true });

      const doc = await call('GET', '/v1/openapi.json');
      const paths = doc.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
      expect(Object.keys(paths['/v1/queues']!)).toEqual(['get']);
      expect(Object.keys(paths['/v1/queues']!.get!.responses)).toEqual(['200', '401', '503']);
      expect(JSON.stringify(paths['/v1/queues']!.get!.responses['200'])).toContain('"queues":{"type":"array","items":{"$ref":"#/components/schemas/QueueOverview"}}');
      // the last hour per minute, in the listing and the stats route alike
      const schemas = (doc.body.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
      expect(Object.keys(schemas.LastHour!.properties)).toEqual(['minute', 'completed', 'dead']);
      expect(schemas.LastHour!.properties.completed).toMatchObject({ type: 'array', minItems: 60, maxItems: 60 });
      expect(JSON.stringify(schemas.QueueOverview!.properties.lastHour)).toContain('#/components/schemas/LastHour');
      expect(JSON.stringify(paths['/v1/queues/{queue}']!.get!.responses['200'])).toContain('#/components/schemas/LastHour');
    });

    it('serves Prometheus metrics and the OpenAPI document', async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs`, { payload: 1 });
      const res = await fetch(`${fx.target.baseUrl}/metrics`, { headers: fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {} });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      expect(text).toContain(`emq_jobs{queue="${queue}",state="pending"} 1`);
      expect(text).toContain(`emq_jobs{queue="${queue}",state="waiting"} 0`);
      expect(text).toContain(`emq_jobs_completed_total{queue="${queue}"} 0`);
      expect(text).toContain(`emq_jobs_dead_total{queue="${queue}"} 0`);
      expect(text).toContain(`emq_jobs_retried_total{queue="${queue}"} 0`);
      expect(text).toContain(`emq_jobs_stalled_total{queue="${queue}"} 0`);
      expect(text).toContain(`emq_rate_limited_total{queue="${queue}"} 0`);
      const doc = await call('GET', '/v1/openapi.json');
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toBe('3.1.0');
      const paths = doc.body.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>>;
      expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/v1/queues/{queue}/jobs', '/v1/queues/{queue}/jobs/bulk', '/healthz', '/metrics']));
      expect(Object.keys(paths['/v1/queues/{queue}/jobs']!.post!.requestBody!.content['application/json']!.schema.properties ?? {})).toEqual(
        expect.arrayContaining(['payload', 'id', 'group', 'delayMs', 'runAt', 'priority', 'maxAttempts', 'backoffMs']),
      );
      // the document says the shapes the routes answer: one EnqueueResult per job, the Job's attempt counts
      const schemas = (doc.body.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
      expect(JSON.stringify((paths['/v1/queues/{queue}/jobs/bulk']!.post as { responses: Record<string, unknown> }).responses['201'])).toContain(
        '"jobs":{"type":"array","items":{"$ref":"#/components/schemas/EnqueueResult"}}',
      );
      expect(Object.keys(schemas.EnqueueResult!.properties)).toEqual(['id', 'state']);
      expect(Object.keys(schemas.Job!.properties)).toEqual(expect.arrayContaining(['attempt', 'maxAttempts', 'attemptsStarted']));
      expect(Object.keys(schemas.Job!.properties)).not.toEqual(expect.arrayContaining(['attempts']));
      expect(Object.keys(schemas.Job!.properties)).not.toEqual(expect.arrayContaining(['totalAttempts']));
    });

    it('answers unknown routes with a JSON 404', async () => {
      const answer = await call('GET', '/v1/nowhere');
      expect(answer).toMatchObject({ status: 404, body: { error: { code: 'EMQNOTFOUND' } } });
    });

    it('requires the bearer token when one is set', async () => {
      if (!fx.target.token) {
        expect((await call('GET', `/v1/queues/${q()}`, undefined, { auth: null })).status).toBe(200);
        expect((await call('GET', '/v1/queues', undefined, { auth: null })).status).toBe(200);
        return;
      }
      const queue = q();
      for (const auth of [null, 'wrong', `${fx.target.token}x`]) {
        const answer = await call('POST', `/v1/queues/${queue}/jobs`, { payload: 1 }, { auth });
        expect(answer.status).toBe(401);
        expect(answer.body.error?.code).toBe('EMQAUTH');
        expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      expect(await keysOf(queue)).toEqual([]);
      expect((await call('GET', '/metrics', undefined, { auth: null })).status).toBe(401);
      for (const auth of [null, 'wrong']) {
        expect(await call('GET', '/v1/queues', undefined, { auth })).toMatchObject({ status: 401, body: { error: { code: 'EMQAUTH' } } });
      }
      expect((await call('GET', `/v1/queues/${queue}`)).status).toBe(200);
    });

    it('caps the payload as stored, not as escaped: JSON \\uXXXX escapes get through the body limit', async () => {
      const queue = q();
      // as Python's json.dumps writes it: every non-ASCII character escaped, six bytes for three
      const spelled = (text: string): string => `{"payload": "${text.replace(/[^\x00-\x7f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}"}`;
      // stored as 2 quotes and 3 bytes a character: the most characters within the cap, and one more
      const most = Math.floor((PAYLOAD_CAP - 2) / 3);
      const under = await call('POST', `/v1/queues/${queue}/jobs`, undefined, { raw: spelled('中'.repeat(most)) });
      expect(under.status, JSON.stringify(under.body)).toBe(201);
      expect((await call('GET', `/v1/queues/${queue}/jobs/${String(under.body.id)}`)).body.payload).toBe('中'.repeat(most));
      // a 2 MiB body, well under the body limit: the stored size refuses it
      await refused(queue, 413, 'EMQTOOLARGE', 'POST', `/v1/queues/${queue}/jobs`, undefined, { raw: spelled('中'.repeat(most + 1)) });
      // the worst case, six bytes of body for one stored: ASCII spelled as escapes, a byte under the cap
      const ascii = `{"payload":"${'\\u0041'.repeat(PAYLOAD_CAP - 3)}"}`;
      expect(ascii.length).toBeGreaterThan(6 * PAYLOAD_CAP - 64);
      const worst = await call('POST', `/v1/queues/${queue}/jobs`, undefined, { raw: ascii });
      expect(worst.status, JSON.stringify(worst.body)).toBe(201);
      expect((await call('GET', `/v1/queues/${queue}/jobs/${String(worst.body.id)}`)).body.payload).toBe('A'.repeat(PAYLOAD_CAP - 3));
    });

    // Last: a server that answers 413 closes the connection, which the client's keep-alive pool
    // may only notice on its next request.
    it('refuses a payload over 1 MiB with 413 and writes nothing', async () => {
      const queue = q();
      // read whole (the body is under the request limit), then refused for its payload's size
      await refused(queue, 413, 'EMQTOOLARGE', 'POST', `/v1/queues/${queue}/jobs`, { payload: 'x'.repeat(1024 * 1024 + 10) });
      // refused from its declared length, before any of it is read
      const before = (await keysOf(queue)).sort();
      const answer = await declaredOnly(`/v1/queues/${queue}/jobs`, ENQUEUE_BODY_LIMIT + 1);
      expect(answer.status, JSON.stringify(answer.body)).toBe(413);
      expect(answer.body.error?.code).toBe('EMQTOOLARGE');
      expect((await keysOf(queue)).sort()).toEqual(before);
    });

    it('reads a chunked body up to the limit, and refuses one a byte over it with 413 and writes nothing', async () => {
      const queue = q();
      const limits = [
        [`/v1/queues/${queue}/jobs`, ENQUEUE_BODY_LIMIT, '{"payload":1}'],
        [`/v1/queues/${queue}/jobs/bulk`, BULK_BODY_LIMIT, '{"jobs":[{"payload":1}]}'],
      ] as const;
      for (const [path, limit, json] of limits) {
        // JSON padded with spaces to exactly the limit: read whole, and taken
        const padded = json + ' '.repeat(limit - json.length);
        const half = limit >> 1;
        expect((await chunkedCall(path, [padded.slice(0, half), padded.slice(half)])).status).toBe(201);
        const before = (await keysOf(queue)).sort();
        const answer = await chunkedOnly(path, limit + 1);
        expect(answer.status, JSON.stringify(answer.body)).toBe(413);
        expect(answer.body.error?.code).toBe('EMQTOOLARGE');
        expect((await keysOf(queue)).sort()).toEqual(before);
      }
    });
  });
}
