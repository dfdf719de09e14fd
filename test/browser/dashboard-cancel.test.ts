import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keysOf, leases, useRedis } from '../helpers.js';
import { jobPath, LAPTOP, NARROW, queuePath, useSignedInTabs } from './signed-in-tabs.js';

/** Where this suite's screenshots go: `.scratch/cancel-shots/` at the repository's root (git-ignored), or EMQ_CANCEL_SHOTS. */
const SHOTS = process.env.EMQ_CANCEL_SHOTS || join(import.meta.dirname, '..', '..', '.scratch', 'cancel-shots');

/**
 * Cancel on the dashboard (docs/guides/job-controls.md), in a real chromium against `emq serve`: a
 * job's page offers Cancel while the job is unfinished, confirms it in the dialog (whose buttons
 * read "Cancel job" and "Keep job"), sends it through the public route with the reason typed, and
 * shows the job cancelled and why; a running job shows it is being cancelled until its settle
 * ends it; the queue page has the cancelled tab and the queues page the count. A job's expiry is
 * shown, and an expired job dead with EMQEXPIRED.
 */
describe('the dashboard cancels jobs (emq serve, chromium)', () => {
  const redis = useRedis();
  const token = 'ui-cancel-token';
  const { tab, open, visit, shot, scrollWidth } = useSignedInTabs(token, SHOTS);
  const rowOf = (queue: { name: string }, id: string): Promise<Record<string, string>> => redis.raw.hgetall(keysOf(queue).job(id));

  it('cancels a pending job from its page after a confirmation, with the reason typed, and shows it cancelled and why', async () => {
    const queue = redis.queue<{ upload: number }>();
    const { id } = await queue.add({ upload: 7 }, { group: 'tenant-7' });

    const page = await tab();
    await open(page, jobPath(queue.name, id));
    const form = page.getByRole('form', { name: 'Cancel job' });
    await form.waitFor();
    expect(await page.locator('h1 .state-pending').count()).toBe(1);
    await shot(page, 'job-pending-1280');

    // Keep job: the dialog closes, nothing is sent
    await form.getByLabel('Reason (optional)').fill('the user deleted the upload');
    await form.getByRole('button', { name: 'Cancel job' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.innerText()).toContain(`Cancel ${id}? It ends cancelled now and never runs.`);
    expect(await dialog.getByRole('button').allInnerTexts()).toEqual(['Keep job', 'Cancel job']);
    await shot(page, 'job-cancel-confirm-1280');
    await dialog.getByRole('button', { name: 'Keep job' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await rowOf(queue, id)).s).toBe('pending');

    await form.getByRole('button', { name: 'Cancel job' }).click();
    await dialog.getByRole('button', { name: 'Cancel job' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('status').filter({ hasText: `${id} is cancelled` }).waitFor();
    expect(await rowOf(queue, id)).toMatchObject({ s: 'cancelled', cx: 'the user deleted the upload' });

    // the page as reloaded: its state, why, when, no Cancel any more, the events in its timeline
    await page.locator('h1 .state-cancelled').waitFor();
    expect(await page.locator('[data-cancel="cancelled"]').innerText()).toMatch(/^This job was cancelled at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: “the user deleted the upload”\.$/);
    expect(await page.getByRole('form', { name: 'Cancel job' }).count()).toBe(0);
    expect(await page.locator('dl.facts dt', { hasText: /^Cancelled$/ }).count()).toBe(1);
    await page.getByRole('button', { name: 'Remove', exact: true }).waitFor();
    const timeline = await page.getByRole('table', { name: 'Timeline' }).innerText();
    expect(timeline).toMatch(/cancelled\s+reason the user deleted the upload/);
    await shot(page, 'job-cancelled-1280');

    // the queue page: the cancelled tab with its count, the job in it; the queues page's count
    await visit(page, queuePath(queue.name, '?state=cancelled'));
    await page.locator(`tr[data-job="${id}"]`).waitFor();
    expect(await page.getByRole('link', { name: 'cancelled (1)' }).getAttribute('aria-current')).toBe('page');
    expect(await page.locator(`tr[data-job="${id}"] .state-cancelled`).count()).toBe(1);
    await shot(page, 'queue-cancelled-1280');
    await visit(page, `/ui?prefix=${encodeURIComponent(queue.name)}`);
    await page.locator(`tr[data-queue="${queue.name}"] td[data-count="cancelled"]`).waitFor();
    expect(await page.locator(`tr[data-queue="${queue.name}"] td[data-count="cancelled"]`).innerText()).toBe('1');
    expect(await page.locator('table.counts th', { hasText: /^cancelled$/ }).count()).toBe(1);
    await shot(page, 'queues-1280');

    // a phone: nothing wider than the screen
    const narrow = await tab(NARROW);
    await open(narrow, jobPath(queue.name, id));
    await narrow.locator('h1 .state-cancelled').waitFor();
    expect(await scrollWidth(narrow)).toBeLessThanOrEqual(NARROW);
    await shot(narrow, `job-cancelled-${NARROW}`);
    await narrow.emulateMedia({ colorScheme: 'dark' });
    await shot(narrow, `job-cancelled-${NARROW}-dark`);
    await narrow.emulateMedia({ colorScheme: 'light' });
    await visit(narrow, `/ui?prefix=${encodeURIComponent(queue.name)}`);
    await narrow.locator(`tr[data-queue="${queue.name}"]`).waitFor();
    expect(await scrollWidth(narrow)).toBeLessThanOrEqual(NARROW);
    await shot(narrow, `queues-${NARROW}`);
  }, 60_000);

  it('cancels a running job: the page says it is being cancelled until its settle ends it cancelled', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('long report');
    const l = leases(queue);
    const [held] = (await l.claim(1, 60_000)).jobs;

    const narrow = await tab(NARROW);
    await open(narrow, jobPath(queue.name, id));
    const form = narrow.getByRole('form', { name: 'Cancel job' });
    await form.waitFor();
    expect(await scrollWidth(narrow)).toBeLessThanOrEqual(NARROW);
    await shot(narrow, `job-active-${NARROW}`);
    await form.getByRole('button', { name: 'Cancel job' }).click();
    const dialog = narrow.getByRole('dialog');
    expect(await dialog.innerText()).toContain(`Cancel ${id}? It is running: its handler is told to stop, and the run ends cancelled when it settles, whatever it returns.`);
    await shot(narrow, `job-cancel-confirm-${NARROW}`);
    await dialog.getByRole('button', { name: 'Cancel job' }).click();
    await narrow.getByRole('status').filter({ hasText: `${id} is cancelling` }).waitFor();
    expect(await rowOf(queue, id)).toMatchObject({ s: 'active', cx: 'cancelled' });

    await narrow.locator('[data-cancel="cancelling"]').waitFor();
    expect(await narrow.locator('[data-cancel="cancelling"]').innerText()).toBe(
      'This job is being cancelled (no reason given). Its handler was told to stop; the run ends cancelled when it settles.',
    );
    expect(await narrow.locator('h1 .state-active').count()).toBe(1);
    expect(await narrow.getByRole('form', { name: 'Cancel job' }).count()).toBe(0);
    expect(await scrollWidth(narrow)).toBeLessThanOrEqual(NARROW);
    await shot(narrow, `job-cancelling-${NARROW}`);

    // the queue page's active tab marks it
    const page = await tab();
    await open(page, queuePath(queue.name, '?state=active'));
    await page.locator(`tr[data-job="${id}"]`).waitFor();
    expect(await page.locator(`tr[data-job="${id}"] td[data-label="State"]`).innerText()).toBe('active cancelling');
    await shot(page, 'queue-active-cancelling-1280');

    // its holder settles (a completion): the page, live, shows it cancelled
    expect((await l.complete([{ id, token: held!.token }])).outcomes).toEqual(['cancelled']);
    await narrow.locator('h1 .state-cancelled').waitFor({ timeout: 15_000 });
    expect(await narrow.locator('[data-cancel="cancelled"]').innerText()).toMatch(/^This job was cancelled at .*Z \(no reason given\)\.$/);
    await shot(narrow, `job-cancelled-after-run-${NARROW}`);
  }, 60_000);

  it('offers no Cancel on a finished job', async () => {
    const queue = redis.queue<string>({ keepCompletedMs: -1 });
    const { id } = await queue.add('done');
    const l = leases(queue);
    const [held] = (await l.claim(1, 30_000)).jobs;
    await l.complete([{ id, token: held!.token }]);
    const page = await tab();
    await open(page, jobPath(queue.name, id));
    await page.locator('h1 .state-completed').waitFor();
    expect(await page.getByRole('form', { name: 'Cancel job' }).count()).toBe(0);
    expect(await page.locator('[data-cancel]').count()).toBe(0);
  }, 30_000);

  it('shows a job\'s expiry, and an expired one dead with EMQEXPIRED at its expiry', async () => {
    const queue = redis.queue<string>();
    const waiting = await queue.add('later', { expireAfterMs: 3_600_000, timeoutMs: 5_000 });
    const late = await queue.add('late', { expireAfterMs: 20 });
    await new Promise((r) => setTimeout(r, 40));
    await leases(queue).beat({ n: 0, leaseMs: 30_000 });
    const page = await tab();
    await open(page, jobPath(queue.name, waiting.id));
    await page.locator('h1 .state-pending').waitFor();
    const facts = await page.locator('dl.facts').innerText();
    expect(facts).toMatch(/Expires unless started by\s+[\d-]+ [\d:]+Z/);
    expect(facts).toMatch(/Own timeout\s+5000 ms/);
    await shot(page, `job-expires-${LAPTOP}`);
    const narrow = await tab(NARROW);
    await open(narrow, jobPath(queue.name, late.id));
    await narrow.locator('h1 .state-dead').waitFor();
    expect(await narrow.locator('dl.facts').innerText()).toMatch(/Expired at\s+[\d-]+ [\d:]+Z/);
    expect(await narrow.locator('main').innerText()).toContain('EMQEXPIRED: not started by its expiry');
    expect(await scrollWidth(narrow)).toBeLessThanOrEqual(NARROW);
    await shot(narrow, `job-expired-${NARROW}`);
  }, 30_000);
});
