import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Leases } from '../../src/lease/leases.js';
import { buryJobs, completeJobs } from '../admin-helpers.js';
import { leases, queueName, useRedis } from '../helpers.js';
import { type Chromium, launchChromium, screenshot } from './chromium.js';
import { startTarget, type Target, type TargetKind } from './targets.js';

/** Every state a queues row counts, as `GET /v1/queues` names them. */
const STATES = ['pending', 'scheduled', 'sleeping', 'active', 'waiting', 'awaiting', 'completed', 'dead', 'cancelled'] as const;
type Counts = Record<(typeof STATES)[number], number>;
interface Overview {
  readonly queue: string;
  readonly paused: boolean;
  readonly counts: Counts;
}

/** How long a job enqueued through the API may take to show on an open queue page: SSE on Node, a 5 s poll in the Worker. */
const LIVE_WITHIN_MS: Record<TargetKind, number> = { node: 5_000, worker: 15_000 };
const NARROW = 360;

/** What the focused element is, as a person tabbing would see it: its role, its name, and whether it is in a dialog. */
interface Focused {
  readonly tag: string;
  readonly name: string;
  readonly inDialog: boolean;
}
// the browser's side as text: the project's types have no DOM (the code under test runs on servers)
const focused = (page: Page): Promise<Focused> =>
  page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el) return { tag: '', name: '', inDialog: false };
    const label = el.labels?.[0]?.textContent ?? el.getAttribute('aria-label') ?? el.textContent ?? '';
    return { tag: el.tagName.toLowerCase(), name: label.trim(), inDialog: el.closest('dialog') !== null };
  })()`);

/** Each row of the queues table as shown: its queue, its text, and its data-count cells' text by state. */
interface QueueRow {
  readonly queue: string;
  readonly text: string;
  readonly counts: Record<string, string>;
}
const queueRows = (page: Page): Promise<QueueRow[]> =>
  page.evaluate(`[...document.querySelectorAll('tr[data-queue]')].map((row) => ({
    queue: row.getAttribute('data-queue') ?? '',
    text: row.innerText,
    counts: Object.fromEntries([...row.querySelectorAll('td[data-count]')].map((td) => [td.getAttribute('data-count'), td.textContent.trim()])),
  }))`);

/** Presses Tab until the focused element matches (checked first: it may be focused already); at most 40 presses. */
async function tabTo(page: Page, matches: (f: Focused) => boolean, what: string): Promise<void> {
  for (let presses = 0; presses <= 40; presses++) {
    if (matches(await focused(page))) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`40 presses of Tab never reached ${what} (focused: ${JSON.stringify(await focused(page))})`);
}

/**
 * The dashboard (issue 20; the contract in docs/design.md) in a real chromium against a real
 * target: `emq serve` on Node or the Worker under miniflare, each with EMQ_TOKEN set, and once
 * without a token where the rules allow one (Node on loopback, the Worker with EMQ_LOCAL_DEV=1).
 * Setup and checks go through the TypeScript API and the HTTP API; everything the test asserts of
 * the page, a person would see or do (role and label locators, the keyboard).
 */
export function describeDashboard(kind: TargetKind): void {
  describe(`the dashboard on ${kind === 'node' ? 'Node (emq serve)' : 'the Worker under miniflare'}`, () => {
    const redis = useRedis();
    const token = `ui-token-${kind}`;
    let target: Target;
    let browser: Chromium;
    beforeAll(async () => {
      [target, browser] = await Promise.all([startTarget(kind, { redisUrl: inject('redisUrl'), token }), launchChromium()]);
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await target?.close();
    });

    async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(target.url + path, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    }
    const overview = async (): Promise<Map<string, Overview>> =>
      new Map((await api<{ queues: Overview[] }>('GET', '/v1/queues')).queues.map((q) => [q.queue, q]));
    const enqueue = (queue: string, job: Record<string, unknown>): Promise<{ id: string }> =>
      api('POST', `/v1/queues/${encodeURIComponent(queue)}/jobs`, job);

    const jobPath = (queue: string, id: string): string => `/ui/queues/${encodeURIComponent(queue)}/jobs/${encodeURIComponent(id)}`;
    const queuePath = (queue: string): string => `/ui/queues/${encodeURIComponent(queue)}`;
    const groupPath = (queue: string, group: string): string => `${queuePath(queue)}/groups/${encodeURIComponent(group)}`;

    /**
     * A new tab, `width` wide, failing fast: a locator that waits 10 s has found nothing a person
     * would wait for. Closed after the test: a tab left open keeps its live connection, and chromium
     * opens at most 6 connections to one host over HTTP/1.1, so the seventh tab's requests queue.
     */
    const tabs: Page[] = [];
    async function tab(width = 1280): Promise<Page> {
      const page = await browser.page(width);
      page.setDefaultTimeout(10_000);
      tabs.push(page);
      return page;
    }
    afterEach(async () => {
      await Promise.all(tabs.splice(0).map((page) => page.close()));
    });

    /** Fills the sign-in form (it must show: the API answered 401) with `value` and presses its button. */
    async function signIn(page: Page, value = token): Promise<void> {
      const form = page.getByRole('form', { name: 'Sign in' });
      await form.getByLabel('API token').fill(value);
      await form.getByRole('button', { name: 'Sign in' }).click();
    }

    /** Opens `path` in `page` and signs in there: the token lives in this tab's sessionStorage from then on. */
    async function open(page: Page, path: string): Promise<void> {
      await page.goto(target.url + path);
      await signIn(page);
    }

    const statusText = (page: Page): Promise<string> => page.getByRole('status').innerText();
    /** Waits for the status region to tell something other than `before`: the outcome of the action confirmed after it said `before`. */
    async function told(page: Page, before: string): Promise<string> {
      const said = page.getByRole('status').filter({ hasText: /\S/ });
      await (before === '' ? said : said.filter({ hasNotText: new RegExp(`^\\s*${before.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) })).waitFor();
      return statusText(page);
    }

    /** Confirms the open dialog with its button `verb`, and waits for the status region to tell the result. */
    async function confirm(page: Page, verb: string): Promise<string> {
      const dialog = page.getByRole('dialog');
      const before = (await statusText(page)).trim();
      await dialog.getByRole('button', { name: verb, exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });
      return told(page, before);
    }

    const scrollWidth = (page: Page): Promise<number> => page.evaluate('document.documentElement.scrollWidth');

    it('shows on the queues page the counts of GET /v1/queues, every data-count cell', async () => {
      const busy = redis.queue<{ n: number }>({ name: queueName('ui-counts') });
      const paused = redis.queue<{ n: number }>({ name: queueName('ui-counts') });
      await buryJobs(busy, [{ n: 0 }]);
      await completeJobs(busy, [{ n: 1 }, { n: 2 }]);
      await busy.add({ n: 3 });
      await leases(busy).claim(1, 60_000);
      await busy.addBulk([{ payload: { n: 4 } }, { payload: { n: 5 } }, { payload: { n: 6 } }, { payload: { n: 7 }, delayMs: 600_000 }]);
      await paused.add({ n: 8 });
      await paused.pause();

      const before = await overview();
      const page = await tab();
      // the queues whose names start so: a page shows 50 queues, and the test Redis holds many
      await open(page, '/ui?prefix=ui-counts-');
      await page.locator(`tr[data-queue="${paused.name}"]`).waitFor();
      const shown = await queueRows(page);
      const after = await overview();

      const asText = (counts: Counts): Record<string, string> => Object.fromEntries(STATES.map((s) => [s, String(counts[s])]));
      const mine = new Map(shown.map((row) => [row.queue, row]));
      expect(after.get(busy.name)?.counts).toEqual({ pending: 3, scheduled: 1, active: 1, waiting: 0, awaiting: 0, sleeping: 0, completed: 2, dead: 1, cancelled: 0 });
      for (const queue of [busy, paused]) {
        const row = mine.get(queue.name);
        expect(row, queue.name).toBeDefined();
        expect(row!.counts).toEqual(asText(after.get(queue.name)!.counts));
        await expect(page.locator(`tr[data-queue="${queue.name}"]`).getByRole('link', { name: queue.name, exact: true }).count()).resolves.toBe(1);
      }
      expect(mine.get(paused.name)!.text).toMatch(/\bpaused\b/);
      expect(mine.get(busy.name)!.text).not.toMatch(/\bpaused\b/);
      // every other row too: the suites beside this one change their queues meanwhile, so a row is
      // held to the API's numbers when they were the same before the page loaded and after
      let compared = 0;
      for (const row of shown) {
        const was = before.get(row.queue);
        const is = after.get(row.queue);
        expect(is ?? was, `${row.queue} is not a queue of GET /v1/queues`).toBeDefined();
        if (!was || !is || JSON.stringify(was.counts) !== JSON.stringify(is.counts)) continue;
        expect(row.counts, row.queue).toEqual(asText(is.counts));
        compared++;
      }
      expect(compared).toBeGreaterThanOrEqual(2);

      // the filter, as a person uses it: the page of the queues whose names start so
      await page.getByLabel('Name starts with').fill(busy.name);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(`**/ui?prefix=${busy.name}`);
      await page.locator(`tr[data-queue="${busy.name}"]`).waitFor();
      expect(await page.locator('tr[data-queue]').count()).toBe(1);
    }, 60_000);

    it('finds a dead job on the dead letters page and reprocesses it: pending in the API after', async () => {
      const queue = redis.queue<{ n: number }>();
      const [id] = await buryJobs(queue, [{ n: 1 }]);
      const page = await tab();
      await open(page, `${queuePath(queue.name)}/dead`);
      const row = page.locator(`tr[data-job="${id!}"]`);
      await row.waitFor();
      // the row's button says Reprocess; its accessible name also names the job (`Reprocess JOB:1`)
      await row.getByRole('button', { name: 'Reprocess' }).click();
      await confirm(page, 'Reprocess');
      const job = await api<{ state: string }>('GET', `/v1/queues/${queue.name}/jobs/${encodeURIComponent(id!)}`);
      expect(job.state).toBe('pending');
      await expect(queue.stats()).resolves.toMatchObject({ counts: { pending: 1, dead: 0 } });
    }, 60_000);

    it('removes every dead job shown after one confirmation, and nothing when it is cancelled', async () => {
      const queue = redis.queue<{ n: number }>();
      const ids = await buryJobs(queue, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const page = await tab();
      await open(page, `${queuePath(queue.name)}/dead`);
      for (const id of ids) await page.locator(`tr[data-job="${id}"]`).waitFor();
      await page.getByRole('button', { name: 'Remove all shown' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      await expect(queue.stats()).resolves.toMatchObject({ counts: { dead: 3 } });
      await page.getByRole('button', { name: 'Remove all shown' }).click();
      await confirm(page, 'Remove');
      await expect.poll(async () => (await queue.stats()).counts.dead).toBe(0);
      for (const id of ids) await expect(queue.getJob(id)).resolves.toBeNull();
      await page.getByText('No dead job').waitFor();
    }, 60_000);

    it("stops a group's jobs being claimed once it is paused from its page", async () => {
      const queue = redis.queue<{ n: number }>();
      const held = await enqueue(queue.name, { payload: { n: 1 }, group: 'held' });
      const free = await enqueue(queue.name, { payload: { n: 2 }, group: 'free' });
      const page = await tab();
      await open(page, groupPath(queue.name, 'held'));
      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      await confirm(page, 'Pause');
      const { jobs } = await new Leases(queue).claim(10, 30_000);
      expect(jobs.map((j) => j.id)).toEqual([free.id]);
      expect(jobs.map((j) => j.id)).not.toContain(held.id);
      await expect(queue.stats()).resolves.toMatchObject({ counts: { pending: 1, active: 1 } });
    }, 60_000);

    it("sets a group's limit and rate from its page, and lifts them with empty fields", async () => {
      const queue = redis.queue<{ n: number }>();
      await enqueue(queue.name, { payload: { n: 1 }, group: 'tuned' });
      const page = await tab();
      await open(page, groupPath(queue.name, 'tuned'));
      const limit = page.getByRole('form', { name: 'Limit' });
      await limit.getByLabel('Limit').fill('3');
      let before = (await statusText(page)).trim();
      await limit.getByRole('button', { name: 'Save' }).click();
      await told(page, before);
      const rate = page.getByRole('form', { name: 'Rate' });
      await rate.getByLabel('Starts').fill('7');
      await rate.getByLabel('Per ms').fill('2000');
      before = (await statusText(page)).trim();
      await rate.getByRole('button', { name: 'Save' }).click();
      await told(page, before);
      const groups = async () => (await queue.groups()).groups.find((g) => g.group === 'tuned');
      await expect(groups()).resolves.toMatchObject({ limit: 3, rate: { limit: 7, periodMs: 2000 } });
      await page.locator('[data-field="limit"]', { hasText: '3' }).waitFor();

      await page.getByRole('form', { name: 'Limit' }).getByLabel('Limit').fill('');
      before = (await statusText(page)).trim();
      await page.getByRole('form', { name: 'Limit' }).getByRole('button', { name: 'Save' }).click();
      await told(page, before);
      await page.getByRole('form', { name: 'Rate' }).getByLabel('Starts').fill('');
      await page.getByRole('form', { name: 'Rate' }).getByLabel('Per ms').fill('');
      before = (await statusText(page)).trim();
      await page.getByRole('form', { name: 'Rate' }).getByRole('button', { name: 'Save' }).click();
      await told(page, before);
      await expect(groups()).resolves.toMatchObject({ limit: null, rate: null });
    }, 60_000);

    it("shows a job enqueued while the queue's page is open, without a reload", async () => {
      const queue = redis.queue<{ n: number }>();
      const first = await enqueue(queue.name, { payload: { n: 1 } });
      const page = await tab();
      await open(page, queuePath(queue.name));
      await page.locator(`tr[data-job="${first.id}"]`).waitFor();
      const loads: string[] = [];
      page.on('framenavigated', (frame) => frame === page.mainFrame() && loads.push(frame.url()));
      const later = await enqueue(queue.name, { payload: { n: 2 } });
      const since = performance.now();
      await page.locator(`tr[data-job="${later.id}"]`).waitFor({ timeout: LIVE_WITHIN_MS[kind] });
      console.log(`[browser] ${kind}: the enqueued job showed after ${Math.round(performance.now() - since)} ms`);
      expect(loads).toEqual([]);
    }, 60_000);

    it('shows the sign-in form and no data without the token, says a wrong one is wrong, and the queues with the right one', async () => {
      const queue = redis.queue<{ n: number }>();
      await queue.add({ n: 1 });
      const page = await tab();
      // every request the page makes, to check where the token goes
      const requests: Array<{ url: string; authorization: string | undefined }> = [];
      page.on('request', (request) => requests.push({ url: request.url(), authorization: request.headers()['authorization'] }));
      // the queues page filtered to this test's queue: a page shows 50, and the test Redis holds many
      await page.goto(`${target.url}/ui?prefix=${queue.name}`);
      const form = page.getByRole('form', { name: 'Sign in' });
      await form.waitFor();
      await screenshot(page, kind, 'signin');
      expect(await page.locator('tr[data-queue]').count()).toBe(0);
      expect(await page.locator('table').count()).toBe(0);
      expect(await page.content()).not.toContain(queue.name);

      await signIn(page, 'not-the-token');
      await page.getByRole('alert').filter({ hasText: /wrong/i }).waitFor();
      await screenshot(page, kind, 'signin-wrong');
      expect(await page.locator('tr[data-queue]').count()).toBe(0);
      expect(await page.content()).not.toContain(queue.name);

      await signIn(page);
      await page.locator(`tr[data-queue="${queue.name}"]`).waitFor();
      expect(await page.getByRole('form', { name: 'Sign in' }).count()).toBe(0);
      // the token travels only in the Authorization header of the content's requests: never in
      // a URL, never in a cookie, and it stays in this tab's sessionStorage
      expect(requests.some((r) => r.url.includes('/ui/part') && r.authorization === `Bearer ${token}`)).toBe(true);
      expect(requests.filter((r) => r.url.includes(token))).toEqual([]);
      expect(await page.context().cookies()).toEqual([]);
      expect(await page.evaluate('sessionStorage.length')).toBe(1);
      expect(await page.evaluate('localStorage.length')).toBe(0);
      const other = await tab();
      await other.goto(`${target.url}/ui`);
      await other.getByRole('form', { name: 'Sign in' }).waitFor();
    }, 60_000);

    it(`shows the queues without signing in when the API is open (${kind === 'node' ? 'no EMQ_TOKEN, loopback' : 'EMQ_LOCAL_DEV=1'})`, async () => {
      const queue = redis.queue<{ n: number }>();
      await queue.add({ n: 1 });
      const openTarget = await startTarget(kind, { redisUrl: inject('redisUrl'), token: undefined });
      try {
        const page = await tab();
        await page.goto(`${openTarget.url}/ui?prefix=${queue.name}`);
        await page.locator(`tr[data-queue="${queue.name}"]`).waitFor();
        expect(await page.getByRole('form', { name: 'Sign in' }).count()).toBe(0);
        // its live connection would hold the server's close
        await page.close();
      } finally {
        await openTarget.close();
      }
    }, 90_000);

    it(`signs in and pauses a group with the keyboard alone, ${NARROW} px wide without horizontal scroll`, async () => {
      const queue = redis.queue<{ n: number }>();
      await enqueue(queue.name, { payload: { n: 1 }, group: 'keys' });
      const page = await tab(NARROW);
      await page.goto(target.url + groupPath(queue.name, 'keys'));
      await page.getByRole('form', { name: 'Sign in' }).waitFor();
      await tabTo(page, (f) => f.tag === 'input' && f.name === 'API token', 'the API token input');
      await page.keyboard.type(token);
      await page.keyboard.press('Enter');
      const pause = page.getByRole('button', { name: 'Pause', exact: true });
      await pause.waitFor();
      expect(await scrollWidth(page)).toBeLessThanOrEqual(NARROW);
      await tabTo(page, (f) => f.tag === 'button' && f.name === 'Pause' && !f.inDialog, 'the Pause button');
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor();
      await tabTo(page, (f) => f.tag === 'button' && f.name === 'Pause' && f.inDialog, "the dialog's Pause button");
      const before = (await statusText(page)).trim();
      await page.keyboard.press('Enter');
      await told(page, before);
      const { jobs } = await new Leases(queue).claim(10, 30_000);
      expect(jobs).toEqual([]);
    }, 60_000);

    it(`lays out every page at 1280 and ${NARROW} px wide, never wider than ${NARROW} (screenshots in test-output/screenshots/)`, async () => {
      const queue = redis.queue<{ n: number }>({ name: queueName('ui-pages') });
      const [dead] = await buryJobs(queue, [{ n: 0 }]);
      const pending = await enqueue(queue.name, { payload: { n: 1, text: 'a payload long enough to need wrapping on a narrow screen '.repeat(4) }, group: 'narrow' });
      await queue.upsertScheduler('new-year', { cron: '0 0 1 1 *' }, { payload: { n: 2 } });
      const pages: Array<{ name: string; path: string; ready: (page: Page) => Promise<void> }> = [
        // the page of the queues named like this test's (a page shows 50, and the test Redis holds many)
        { name: 'queues', path: '/ui?prefix=ui-pages-', ready: (p) => p.locator(`tr[data-queue="${queue.name}"]`).waitFor() },
        { name: 'queue', path: queuePath(queue.name), ready: (p) => p.locator(`tr[data-job="${pending.id}"]`).waitFor() },
        { name: 'group', path: groupPath(queue.name, 'narrow'), ready: (p) => p.getByRole('button', { name: 'Pause', exact: true }).waitFor() },
        { name: 'job', path: jobPath(queue.name, dead!), ready: (p) => p.getByRole('button', { name: 'Reprocess', exact: true }).waitFor() },
        { name: 'dead', path: `${queuePath(queue.name)}/dead`, ready: (p) => p.locator(`tr[data-job="${dead!}"]`).waitFor() },
      ];
      const widths: Record<string, number> = {};
      // a page that does not show what it should is told at the end: the others are still shot
      const missing: string[] = [];
      for (const width of [1280, NARROW]) {
        const page = await tab(width);
        await page.goto(`${target.url}/ui`);
        await page.getByRole('form', { name: 'Sign in' }).waitFor();
        if (width === NARROW) {
          await screenshot(page, kind, `signin-${NARROW}`);
          widths.signin = await scrollWidth(page);
        }
        await signIn(page);
        for (const { name, path, ready } of pages) {
          await page.goto(target.url + path);
          await ready(page).catch((error: unknown) => missing.push(`${name} at ${width} px: ${String(error).split('\n', 1)[0]}`));
          await screenshot(page, kind, width === NARROW ? `${name}-${NARROW}` : name);
          if (width === NARROW) widths[name] = await scrollWidth(page);
        }
        await page.close();
      }
      expect(missing).toEqual([]);
      for (const [name, wide] of Object.entries(widths)) expect(wide, `${name} at ${NARROW} px`).toBeLessThanOrEqual(NARROW);
    }, 90_000);
  });
}
