import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FlowNode, Flows, Queue, UnrecoverableError } from '../../src/index.js';
import { Consumer, IoredisTransport } from '../../src/node/index.js';
import type { QueueCounts } from '../../src/job.js';
import { buryJobs, completeJobs } from '../admin-helpers.js';
import { leases, queueName, until, useRedis } from '../helpers.js';
import { type BoardApp, startBoardApp } from './bull-board-app.js';
import { type Chromium, launchChromium } from './chromium.js';

/** A queues row of `GET /v1/queues`. */
interface Overview {
  readonly queue: string;
  readonly paused: boolean;
  readonly counts: QueueCounts;
}

/**
 * The board's status tabs and the cells of `GET /v1/queues` each stands for (docs/guides/bull-board.md,
 * "States"): written out here, not imported from the adapter, so a change of the mapping fails here.
 */
const CELLS_OF: Readonly<Record<string, ReadonlyArray<keyof QueueCounts>>> = {
  ACTIVE: ['active'],
  WAITING: ['pending'],
  'WAITING CHILDREN': ['waiting'],
  COMPLETED: ['completed'],
  FAILED: ['dead', 'cancelled'],
  DELAYED: ['scheduled', 'awaiting'],
};

/** Each status tab of the open queue page as a person reads it: its label, and its badge (none: 0). */
const tabCounts = (page: Page): Promise<Record<string, number>> =>
  page.evaluate(`Object.fromEntries([...document.querySelectorAll('a[href*="?status="]')].map((a) => [
    a.querySelector('[data-text]')?.textContent.trim() ?? a.innerText.trim(),
    Number(a.querySelector('[class*="badge"]')?.textContent.trim() ?? '0'),
  ]))`);

/**
 * bull-board 9 on echomq (issue 36, part 3) in a real Chromium: `createBullBoard` from
 * `@bull-board/hono` with one EchoMQAdapter per queue, served beside the project's HTTP API on one
 * loopback server. What the test asserts of the page, a person sees or does there; the state
 * behind it is checked through `GET /v1/queues` and echomq's Queue. Every request the page makes
 * off loopback (the board's web fonts) is aborted.
 */
describe('bull-board on echomq (Chromium)', () => {
  const redis = useRedis();
  /** Where the screenshots go: a temp dir of this run, kept to be looked at (its path is printed). */
  const shots = mkdtempSync(join(tmpdir(), 'emq-bull-board-'));
  // queues of the file, not of one test (the fixture's queues are deleted after each test)
  const shown = new Queue<{ n: number }>(redis.transport, queueName('bb-shown'));
  const retried = new Queue<{ n: number }>(redis.transport, queueName('bb-retry'));
  /** What the consumer of `retried` was handed, in order: payload and attempt. */
  const seen: Array<{ n: number; attempt: number }> = [];
  let consumer: Consumer<{ n: number }>;
  let flow: FlowNode;
  let app: BoardApp;
  let browser: Chromium;
  const tabs: Page[] = [];

  beforeAll(async () => {
    // every state the board shows: 2 completed, 2 dead, 1 cancelled, 3 pending (one a flow's
    // child), 1 with a priority, 1 scheduled, 1 active, 1 flow parent waiting for its child
    await completeJobs(shown, [{ n: 1 }, { n: 2 }]);
    await buryJobs(shown, [{ n: 3 }, { n: 4 }]);
    await shown.add({ n: 5 });
    await leases(shown).claim(1, 600_000);
    await shown.cancel((await shown.add({ n: 6 })).id, { reason: 'not wanted' });
    await shown.add({ n: 7 });
    await shown.add({ n: 8 }, { priority: 5 });
    await shown.add({ n: 9 }, { delayMs: 600_000 });
    flow = await new Flows(redis.transport).add({ queue: shown.name, payload: { n: 10 }, children: [{ queue: shown.name, payload: { n: 11 } }] });

    // a consumer that fails a job's first run for good and completes any later one
    consumer = new Consumer<{ n: number }>(IoredisTransport.connect(inject('redisUrl')), retried.name, (job) => {
      seen.push({ n: job.payload.n, attempt: job.attempt });
      if (seen.length === 1) throw new UnrecoverableError('first run fails');
      return { ran: seen.length };
    }, { ownsTransport: true }).start();
    await retried.add({ n: 42 });
    await until(async () => (await retried.stats()).counts.dead === 1, 10_000);

    [app, browser] = await Promise.all([startBoardApp(redis.transport, [shown, retried]), launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await consumer?.stop();
    await browser?.close();
    await app?.close();
    for (const queue of [shown, retried]) await queue.obliterate({ force: true });
    console.info(`bull-board screenshots: ${shots}`);
  });

  async function tab(): Promise<Page> {
    const page = await browser.page(1280);
    page.setDefaultTimeout(10_000);
    // nothing leaves loopback: the board asks Google for its web fonts
    await page.route('**/*', (route) => (route.request().url().startsWith(app.url) ? route.continue() : route.abort()));
    tabs.push(page);
    return page;
  }
  afterEach(async () => {
    await Promise.all(tabs.splice(0).map((page) => page.close()));
  });

  const overview = async (queue: string): Promise<Overview> => {
    const res = await fetch(`${app.url}/v1/queues`);
    expect(res.status).toBe(200);
    const { queues } = (await res.json()) as { queues: Overview[] };
    return queues.find((q) => q.queue === queue)!;
  };
  const shoot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

  it("shows each status's count as GET /v1/queues' cells, tab by tab", async () => {
    const page = await tab();
    await page.goto(`${app.url}/board`);
    await page.getByText(/\d+ Jobs/).first().waitFor();
    await shoot(page, 'overview');

    await page.goto(`${app.url}/board/queue/${encodeURIComponent(shown.name)}`);
    await page.locator('a[href*="?status=failed"] [class*="badge"]').waitFor();
    const counts = await tabCounts(page);
    const { counts: cells } = await overview(shown.name);
    await shoot(page, 'queue-latest');

    expect(cells).toMatchObject({ pending: 3, scheduled: 1, active: 1, waiting: 1, completed: 2, dead: 2, cancelled: 1, awaiting: 0 });
    expect(Object.keys(counts).sort()).toEqual(Object.keys(CELLS_OF).sort());
    for (const [label, states] of Object.entries(CELLS_OF)) {
      expect({ label, count: counts[label] }).toEqual({ label, count: states.reduce((sum, s) => sum + cells[s], 0) });
    }

    await page.getByRole('link', { name: /^FAILED/ }).click();
    await page.getByText('not wanted').waitFor();
    await shoot(page, 'queue-failed');
  });

  it('reprocesses a dead job when its Retry is clicked: the consumer runs it again', async () => {
    const [dead] = await retried.getJobs('dead');
    expect(seen).toEqual([{ n: 42, attempt: 1 }]);
    const page = await tab();
    await page.goto(`${app.url}/board/queue/${encodeURIComponent(retried.name)}?status=failed`);
    const card = page.locator('section, article, div').filter({ has: page.getByText(`#${dead!.id.slice(4)}`, { exact: true }) }).filter({ has: page.getByText('first run fails') }).last();
    await card.waitFor();
    await shoot(page, 'retry-before');
    await card.locator('button:has(svg.lucide-refresh-cw)').click();
    const dialog = page.getByRole('alertdialog').or(page.getByRole('dialog'));
    await dialog.getByText('Are you sure that you want to retry this job?').waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();

    await until(async () => (await retried.getJob(dead!.id))?.state === 'completed', 10_000);
    expect(seen).toEqual([{ n: 42, attempt: 1 }, { n: 42, attempt: 1 }]);
    expect(await retried.getJob(dead!.id)).toMatchObject({ state: 'completed', result: { ran: 2 }, attemptsStarted: 2 });
    expect((await overview(retried.name)).counts).toMatchObject({ dead: 0, completed: 1 });
    await page.getByRole('link', { name: /^COMPLETED/ }).click();
    await page.getByText(`#${dead!.id.slice(4)}`, { exact: true }).waitFor();
    await shoot(page, 'retry-after');
  });

  it('pauses the queue when Pause is clicked', async () => {
    expect((await overview(shown.name)).paused).toBe(false);
    const page = await tab();
    await page.goto(`${app.url}/board/queue/${encodeURIComponent(shown.name)}`);
    await page.locator('button[aria-haspopup="menu"]').last().click();
    await page.getByRole('menuitem', { name: 'Pause' }).click();
    const dialog = page.getByRole('alertdialog').or(page.getByRole('dialog'));
    await dialog.getByText('Are you sure that you want to pause queue processing?').waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();

    await until(async () => (await overview(shown.name)).paused, 10_000);
    expect((await shown.stats()).paused).toBe(true);
    await page.getByText('Paused', { exact: false }).first().waitFor();
    await shoot(page, 'paused');
    await shown.resume();
  });

  it("shows a queue's schedulers and a flow's tree", async () => {
    await shown.upsertScheduler('nightly-report', { cron: '0 3 * * *', tz: 'Europe/Berlin' }, { payload: { n: 12 } });
    const page = await tab();
    await page.goto(`${app.url}/board/job-schedulers?queueName=${encodeURIComponent(shown.name)}`);
    await page.getByText('nightly-report').first().waitFor();
    await page.getByText('0 3 * * *').first().waitFor();
    await shoot(page, 'schedulers');

    await page.goto(`${app.url}/board/queue/${encodeURIComponent(shown.name)}/${encodeURIComponent(flow.id.slice(4))}`);
    await page.getByText('Job flow', { exact: true }).waitFor();
    await page.getByText('1 unfinished').first().waitFor();
    // the child's node, its id cut to its end as the board shows it, and its state
    const child = flow.children[0]!.id.slice(4);
    await page.getByText(new RegExp(`${child.slice(-8).replace('.', '\\.')}$`)).first().waitFor();
    await page.getByText(/^waiting$/i).first().waitFor();
    await shoot(page, 'flow');
    await shown.removeScheduler('nightly-report');
  });
});
