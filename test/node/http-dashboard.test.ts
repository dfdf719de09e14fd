import { afterEach, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../src/http/app.js';
import { Flows, PartitionedQueue } from '../../src/index.js';
import { Leases } from '../../src/lease/leases.js';
import { serveApi } from '../../src/node/cli/serve.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { queueName, until, useRedis } from '../helpers.js';

const quiet = (): void => {};
const TOKEN = 'dashboard-token';
const auth = { Authorization: `Bearer ${TOKEN}` };

/**
 * The dashboard's routes over HTTP, without a browser (test/browser/ drives the pages): the frame
 * is served without the token and holds no data, the content needs the token like every API
 * route, what it shows is what the API answers, and its SSE route tells of changes.
 */
describe('the dashboard routes on Node', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function serve(options: { token?: string; dashboard?: boolean } = { token: TOKEN }) {
    const transport = IoredisTransport.connect(url);
    const api = await serveApi({ transport, port: 0, log: quiet, ...options });
    closing.push(async () => {
      await api.close();
      await transport.close();
    });
    return api;
  }

  it('serves the frame and its assets without the token, with no data in them and a strict content policy', async () => {
    const api = await serve();
    const q = redis.queue();
    await q.add({ secret: 'payload-123' });
    for (const path of ['/ui', '/ui/', `/ui/queues/${q.name}`, `/ui/queues/${q.name}/jobs/JOB:1`, `/ui/queues/${q.name}/dead`]) {
      const res = await fetch(`${api.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      const html = await res.text();
      expect(html.startsWith('<!doctype html>')).toBe(true);
      expect(html).not.toContain('payload-123');
      expect(html).not.toContain('data-queue=');
      expect(html).toContain('aria-label="Sign in"');
    }
    const script = await fetch(`${api.url}/ui/app.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain("sessionStorage.getItem(KEY)");
    const css = await fetch(`${api.url}/ui/app.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('answers content only with the token: 401 without it or with a wrong one, never a row', async () => {
    const api = await serve();
    const q = redis.queue();
    await q.add(1);
    const none = await fetch(`${api.url}/ui/part`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: 'EMQAUTH' } });
    const wrong = await fetch(`${api.url}/ui/part/queues/${q.name}`, { headers: { Authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toContain('wrong');
    for (const path of ['/ui/part', `/ui/part/queues/${q.name}/dead`, `/ui/part/queues/${q.name}/jobs/JOB:1`, `/ui/live?queue=${q.name}`]) {
      expect((await fetch(`${api.url}${path}`)).status, path).toBe(401);
    }
  });

  it('shows each queue with the counts GET /v1/queues answers', async () => {
    const api = await serve();
    const q = redis.queue();
    for (let i = 0; i < 5; i++) await q.add(i);
    await q.add('later', { delayMs: 60_000 });
    const leases = new Leases(q);
    const [held] = (await leases.claim(2, 60_000)).jobs;
    await leases.fail([{ id: held!.id, token: held!.token, error: 'boom' }]);
    await q.pause();
    const html = await (await fetch(`${api.url}/ui/part?prefix=${q.name}`, { headers: auth })).text();
    const { queues } = (await (await fetch(`${api.url}/v1/queues`, { headers: auth })).json()) as { queues: Array<{ queue: string; paused: boolean; counts: Record<string, number> }> };
    const row = queues.find((r) => r.queue === q.name)!;
    expect(row.counts).toMatchObject({ pending: 3, scheduled: 1, active: 1, dead: 1 });
    const shown = new RegExp(`<tr data-queue="${q.name}">(.*?)</tr>`, 's').exec(html)?.[1];
    expect(shown).toBeDefined();
    for (const [state, count] of Object.entries(row.counts)) {
      expect(shown, state).toContain(`data-count="${state}" data-label="${state}">${count}<`);
    }
    expect(shown).toContain('>paused<');
    // the last hour's chart: the job sent to dead this minute, as the API's lastHour has it
    expect(shown).toContain('aria-label="Last hour: 0 completed, 1 dead; busiest minute 1 jobs"');
  });

  it('pages the queues by name, 50 a page, those starting with a prefix', async () => {
    const api = await serve();
    const prefix = `${queueName('ui-pages')}-`;
    const names = Array.from({ length: 51 }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);
    closing.push(async () => void (await redis.raw.srem('emq:queues', ...names)));
    for (const name of names) await redis.queue({ name }).add(1);
    const rows = (html: string) => [...html.matchAll(/<tr data-queue="([^"]+)">/g)].map((m) => m[1]);
    const first = await (await fetch(`${api.url}/ui/part?prefix=${prefix}`, { headers: auth })).text();
    expect(rows(first)).toEqual(names.slice(0, 50));
    expect(first).toContain(`href="/ui?prefix=${prefix}&amp;offset=50">Next<`);
    expect(first).not.toContain('>Previous<');
    const second = await (await fetch(`${api.url}/ui/part?prefix=${prefix}&offset=50`, { headers: auth })).text();
    expect(rows(second)).toEqual(names.slice(50));
    expect(second).toContain(`href="/ui?prefix=${prefix}&amp;offset=0">Previous<`);
    expect(second).not.toContain('>Next<');
    // what a page follows live is what it shows: at most the 50 one /ui/live response takes
    expect(first).toContain(`data-live-queues="${names.slice(0, 50).join(' ')}"`);
  });

  it('lists a state of a queue, its dead letters with their actions, and a job with its timeline', async () => {
    const api = await serve();
    const q = redis.queue();
    const { id } = await q.add({ to: '<script>alert(1)</script>' }, { maxAttempts: 1 });
    await q.add(2, { group: 'tenant-1' });
    const leases = new Leases(q);
    const claimed = await leases.claim(1, 60_000);
    expect(claimed.jobs[0]!.id).toBe(id);
    await leases.fail([{ id, token: claimed.jobs[0]!.token, error: 'Error: boom\n    at handler (mail.ts:3:9)' }]);

    const pending = await (await fetch(`${api.url}/ui/part/queues/${q.name}?state=pending`, { headers: auth })).text();
    expect(pending).toContain('data-job="JOB:2"');
    expect(pending).not.toContain(`data-job="${id}"`);

    const dead = await (await fetch(`${api.url}/ui/part/queues/${q.name}/dead`, { headers: auth })).text();
    expect(dead).toContain(`data-job="${id}"`);
    expect(dead).toContain(`data-url="/v1/queues/${q.name}/jobs/${encodeURIComponent(id)}/reprocess"`);
    expect(dead).toContain('data-verb="Remove"');

    const job = await (await fetch(`${api.url}/ui/part/queues/${q.name}/jobs/${encodeURIComponent(id)}`, { headers: auth })).text();
    // the payload is text, never markup
    expect(job).not.toContain('<script>alert(1)</script>');
    expect(job).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(job).toContain('at handler (mail.ts:3:9)');
    const timeline = [...job.matchAll(/<td data-label="Event">(added|active|dead|retried|completed)<\/td>/g)].map((m) => m[1]);
    expect(timeline).toEqual(['added', 'active', 'dead']);
  });

  it('lists the groups of a queue with their numbers, and the page of a group with its actions', async () => {
    const api = await serve();
    const q = redis.queue();
    await q.add(1, { group: 'tenant-a' });
    await q.add(2, { group: 'tenant-a' });
    await q.add(3, { group: 'tenant-b' });
    await q.setGroupLimit('tenant-a', 1);
    await q.pauseGroup('tenant-b');
    await new Leases(q).claim(1, 60_000);
    const page = await (await fetch(`${api.url}/ui/part/queues/${q.name}`, { headers: auth })).text();
    const rowOf = (g: string) => new RegExp(`<tr data-group="${g}">(.*?)</tr>`, 's').exec(page)?.[1] ?? '';
    expect(rowOf('tenant-a')).toMatch(/>running<.*>1<.*>1<.*>-<.*>1</s);
    expect(rowOf('tenant-b')).toMatch(/>paused<.*>0<.*>-<.*>-<.*>1</s);
    const group = await (await fetch(`${api.url}/ui/part/queues/${q.name}/groups/tenant-b`, { headers: auth })).text();
    expect(group).toContain(`data-url="/v1/queues/${q.name}/groups/tenant-b/resume"`);
    expect(group).toContain('data-field="waiting">1<');
    const missing = await fetch(`${api.url}/ui/part/queues/${q.name}/groups/tenant-z`, { headers: auth });
    expect(missing.status).toBe(404);
  });

  it('shows a partitioned queue: its jobs and groups over every partition, a job with its timeline, and follows it live', async () => {
    const api = await serve();
    const name = queueName('ui-parts');
    const parts = new PartitionedQueue(redis.transport, name, { partitions: 4 });
    closing.push(async () => {
      for (const part of parts.parts) {
        const keys = await redis.raw.keys(`emq:{${part.name}}:*`);
        if (keys.length > 0) await redis.raw.del(...keys);
      }
      await redis.raw.srem('emq:queues', name);
      await redis.raw.hdel('{emq:queues}:partitions', name);
    });
    const added = await parts.addBulk(Array.from({ length: 8 }, (_, i) => ({ payload: i, group: `g${i}` })));
    const page = await (await fetch(`${api.url}/ui/part/queues/${name}`, { headers: auth })).text();
    for (const { id } of added) expect(page).toContain(`data-job="${id}"`);
    for (let i = 0; i < 8; i++) expect(page).toContain(`data-group="g${i}"`);
    const job = await (await fetch(`${api.url}/ui/part/queues/${name}/jobs/${encodeURIComponent(added[5]!.id)}`, { headers: auth })).text();
    expect([...job.matchAll(/<td data-label="Event">(\w+)<\/td>/g)].map((m) => m[1])).toEqual(['added']);
    const queues = await (await fetch(`${api.url}/ui/part?prefix=${name}`, { headers: auth })).text();
    expect(queues).toMatch(new RegExp(`<tr data-queue="${name}">.*\\(4 partitions\\).*data-count="pending" data-label="pending">8<`, 's'));

    const stop = new AbortController();
    closing.push(async () => stop.abort());
    const res = await fetch(`${api.url}/ui/live?queue=${name}`, { headers: auth, signal: stop.signal });
    let text = '';
    void (async () => {
      try {
        for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) text += chunk;
      } catch {
        // closed by the test
      }
    })();
    await until(() => text.includes('event: ready'));
    await until(() => text.includes('event: change'), 2_000);
    const told = text.split('event: change').length;
    await parts.add(9, { group: 'g3' });
    await until(() => text.split('event: change').length > told, 2_000);
  });

  it('shows a flow: the parent with its children, a child with its parent', async () => {
    const api = await serve();
    const parent = redis.queue();
    const child = redis.queue();
    await new Flows(redis.transport).add({ queue: parent.name, id: 'report', payload: 'merge', children: [{ queue: child.name, id: 'page-1', payload: 1 }] });
    const parentPage = await (await fetch(`${api.url}/ui/part/queues/${parent.name}/jobs/JOB:report`, { headers: auth })).text();
    expect(parentPage).toContain('<span class="state state-waiting">waiting</span>');
    expect(parentPage).toContain(`href="/ui/queues/${child.name}/jobs/JOB%3Apage-1"`);
    expect(parentPage).toContain('0 of 1 finished');
    const childPage = await (await fetch(`${api.url}/ui/part/queues/${child.name}/jobs/JOB:page-1`, { headers: auth })).text();
    expect(childPage).toContain(`href="/ui/queues/${parent.name}/jobs/JOB%3Areport"`);
  });

  it('refuses bad input with a typed error, and a missing job with 404', async () => {
    const api = await serve();
    const q = redis.queue();
    await q.add(1);
    const cases: Array<[string, number, string]> = [
      [`/ui/part/queues/${q.name}?state=lost`, 400, 'EMQARG'],
      [`/ui/part/queues/${q.name}?offset=-1`, 400, 'EMQARG'],
      [`/ui/part/queues/${q.name}/dead?offset=x`, 400, 'EMQARG'],
      [`/ui/part/queues/${q.name}/jobs/JOB:404`, 404, 'EMQNOTFOUND'],
      ['/ui/part/queues/bad%20name', 400, 'EMQNAME'],
      ['/ui/live', 400, 'EMQARG'],
      [`/ui/live?${Array.from({ length: 51 }, (_, i) => `queue=q${i}`).join('&')}`, 400, 'EMQARG'],
    ];
    for (const [path, status, code] of cases) {
      const res = await fetch(`${api.url}${path}`, { headers: auth });
      expect(res.status, path).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code, path).toBe(code);
    }
  });

  it('tells of a change of a followed queue over SSE', async () => {
    const api = await serve();
    const q = redis.queue();
    await q.add(1);
    const stop = new AbortController();
    closing.push(async () => stop.abort());
    const res = await fetch(`${api.url}/ui/live?queue=${q.name}`, { headers: auth, signal: stop.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    let text = '';
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += value;
        }
      } catch {
        // closed by the test
      }
    })();
    await until(() => text.includes('event: ready'));
    // the add made just before the response opened is told too: the page may have read its
    // content before it, and must not miss it
    await until(() => text.includes('event: change'), 2_000);
    expect(text).toContain(`data: ${q.name}`);
    const told = text.split('event: change').length;
    await q.add(2);
    await until(() => text.split('event: change').length > told, 2_000);
  });

  it('is not served with dashboard: false, and a refused app still shows the frame', async () => {
    const api = await serve({ token: TOKEN, dashboard: false });
    // an unknown route, behind the token like every other
    expect((await fetch(`${api.url}/ui`)).status).toBe(401);
    expect((await fetch(`${api.url}/ui`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${api.url}/ui/part`, { headers: auth })).status).toBe(404);

    const app = createApp({ transport: () => redis.transport, refuse: () => 'EMQ_TOKEN is not set', log: quiet });
    expect((await app.request('/ui')).status).toBe(200);
    const refused = await app.request('/ui/part');
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: 'EMQCONFIG', message: 'EMQ_TOKEN is not set' } });
  });
});
