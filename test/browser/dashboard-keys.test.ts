import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { utc } from '../../src/http/ui/widgets.js';
import { keysOf, leases, useRedis } from '../helpers.js';
import { jobPath, LAPTOP, NARROW, queuePath, useSignedInTabs } from './signed-in-tabs.js';

/** Where this suite's screenshots go: `.scratch/keys-shots/` at the repository's root (git-ignored), or EMQ_KEYS_SHOTS. */
const SHOTS = process.env.EMQ_KEYS_SHOTS || join(import.meta.dirname, '..', '..', '.scratch', 'keys-shots');

/**
 * Concurrency keys on the dashboard (docs/guides/job-controls.md), in a real chromium against `emq
 * serve`: the queue page shows its keys (limit, running, parked) once a job named one, live as
 * claims park and start jobs; its Key limit form raises a key's limit through the public route
 * (the key typed, `org:7`, sent encoded), says how many parked jobs came back, and lifts it with
 * an empty limit; its Key rate form sets a key's rate (`1 / 1 min` in the table, and until when it
 * holds the jobs it parked), tells the API's refusal of half a rate, and lifts it with both fields
 * empty; a parked job's page shows its keys and the key it waits for.
 */
describe('the dashboard shows and sets concurrency keys (emq serve, chromium)', () => {
  const redis = useRedis();
  const token = 'ui-keys-token';
  const { tab, open, shot, scrollWidth } = useSignedInTabs(token, SHOTS);
  /** A key's row as the table shows it: its cells' text, key first. */
  const rowText = async (page: Page, key: string): Promise<string[]> => page.locator(`tr[data-key="${key}"] > *`).allInnerTexts();
  /** Waits until `key`'s row reads `cells` (the page reloads live, on Node within a second of a change). */
  async function rowReads(page: Page, key: string, cells: readonly string[]): Promise<void> {
    await expect.poll(() => rowText(page, key), { timeout: 10_000 }).toEqual(cells);
  }

  it('shows a full key parking jobs, raises its limit from the form to readmit them, and lifts it', async () => {
    const queue = redis.queue<{ report: number }>();
    await queue.setKeyLimit('org:7', 1);
    const added = await queue.addBulk([1, 2, 3].map((report) => ({ payload: { report }, group: `user-${report}`, keys: ['org:7', 'plan:free'] })));
    const l = leases(queue);
    const [running] = (await l.claim(10, 60_000)).jobs;
    const parked = added.map((a) => a.id).filter((id) => id !== running!.id);
    expect(await redis.raw.zcard(`${keysOf(queue).prefix}kwait:org:7`)).toBe(2);

    const page = await tab();
    await open(page, queuePath(queue.name));
    await page.getByRole('table', { name: 'Concurrency keys' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Concurrency keys' }).count()).toBe(1);
    expect(await page.locator('table[aria-label="Concurrency keys"] thead th').allInnerTexts()).toEqual(['Key', 'Limit', 'Running', 'Parked', 'Rate', 'Throttled until']);
    expect(await rowText(page, 'org:7')).toEqual(['org:7', '1', '1', '2', '-', '-']);
    expect(await rowText(page, 'plan:free')).toEqual(['plan:free', '-', '1', '0', '-', '-']);
    // the parked jobs are pending: listed in the pending tab
    expect(await page.getByRole('link', { name: 'pending (2)' }).count()).toBe(1);
    await shot(page, `queue-keys-parked-${LAPTOP}`);

    // a parked job's page: its keys, and the key it waits for
    const job = await tab();
    await open(job, jobPath(queue.name, parked[0]!));
    await job.locator('[data-parked="org:7"]').waitFor();
    expect(await job.locator('[data-field="keys"]').innerText()).toBe('org:7, plan:free');
    expect(await job.locator('[data-parked="org:7"]').innerText()).toMatch(
      /^Waiting for key org:7: the last claim to reach this job, at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, found the key at its limit or its rate\. It goes back to its place in its lane when the key has room: a running job of the key ends, its rate lets one more start, or its limit or rate is raised\.$/,
    );
    expect(await job.getByRole('table', { name: 'Timeline' }).innerText()).toMatch(/parked\s+key org:7/);
    await shot(job, `job-parked-${LAPTOP}`);

    // raised to 3 from the form: both parked jobs readmitted, said in the status
    const form = page.getByRole('form', { name: 'Key limit' });
    await form.getByLabel('Key').fill('org:7');
    await form.getByLabel('Limit').fill('3');
    // the form alone: a full-page shot here leaves chromium scrolled where the click then misses
    await form.screenshot({ path: join(SHOTS, `queue-keys-form-${LAPTOP}.png`) });
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved the limit of key org:7: 2 parked job(s) readmitted' }).waitFor();
    expect(await redis.raw.hget(`${keysOf(queue).prefix}klimit`, 'org:7')).toBe('3');
    await rowReads(page, 'org:7', ['org:7', '3', '1', '0', '-', '-']);
    expect(await form.getByLabel('Key').inputValue()).toBe('');

    // claimed: live, the key counts them running, and the job page no longer says it waits
    expect((await l.claim(10, 60_000)).jobs.map((j) => j.id).sort()).toEqual([...parked].sort());
    await rowReads(page, 'org:7', ['org:7', '3', '3', '0', '-', '-']);
    await rowReads(page, 'plan:free', ['plan:free', '-', '3', '0', '-', '-']);
    await job.locator('h1 .state-active').waitFor();
    expect(await job.locator('[data-parked]').count()).toBe(0);

    // an empty limit lifts it
    await form.getByLabel('Key').fill('org:7');
    await form.getByLabel('Limit').fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved the limit of key org:7: 0 parked job(s) readmitted' }).waitFor();
    await rowReads(page, 'org:7', ['org:7', '-', '3', '0', '-', '-']);
    expect(await redis.raw.hexists(`${keysOf(queue).prefix}klimit`, 'org:7')).toBe(0);
    await shot(page, `queue-keys-lifted-${LAPTOP}`);

    // a key the browser would not send: refused by the field, nothing sent
    await form.getByLabel('Key').fill('a b');
    await form.getByLabel('Limit').fill('1');
    await form.getByRole('button', { name: 'Save' }).click();
    expect(await form.getByLabel('Key').evaluate((input) => (input as unknown as { validity: { valid: boolean } }).validity.valid)).toBe(false);
    expect(await redis.raw.hgetall(`${keysOf(queue).prefix}klimit`)).toEqual({});
  }, 60_000);

  it("sets a key's rate from the form, shows until when it holds the jobs it parked, and lifts it", async () => {
    const queue = redis.queue<{ report: number }>();
    await queue.addBulk([1, 2, 3].map((report) => ({ payload: { report }, keys: ['org:9'] })));
    /** The key as Redis holds it now (`Queue.keyLimits`). */
    const org9 = async () => (await queue.keyLimits()).find((k) => k.key === 'org:9');

    const page = await tab();
    await open(page, queuePath(queue.name));
    await page.getByRole('table', { name: 'Concurrency keys' }).waitFor();
    expect(await rowText(page, 'org:9')).toEqual(['org:9', '-', '0', '0', '-', '-']);

    // 1 start a minute, from the form: saved through the route, nothing parked to readmit
    const form = page.getByRole('form', { name: 'Key rate' });
    await form.getByLabel('Key').fill('org:9');
    await form.getByLabel('Starts').fill('1');
    await form.getByLabel('Per ms').fill('60000');
    await form.screenshot({ path: join(SHOTS, `queue-keys-rate-form-${LAPTOP}.png`) });
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved the rate of key org:9: 0 parked job(s) readmitted' }).waitFor();
    expect(await org9()).toEqual({ key: 'org:9', limit: null, running: 0, parked: 0, rate: { limit: 1, periodMs: 60_000 }, throttledUntil: null });
    await rowReads(page, 'org:9', ['org:9', '-', '0', '0', '1 / 1 min', '-']);
    expect(await form.getByLabel('Key').inputValue()).toBe('');

    // a claim starts one and parks the other two: the key is throttled until its window lets one more start
    const l = leases(queue);
    expect((await l.claim(10, 60_000)).jobs).toHaveLength(1);
    const held = await org9();
    expect(held).toMatchObject({ running: 1, parked: 2, rate: { limit: 1, periodMs: 60_000 } });
    expect(held!.throttledUntil).toBeGreaterThan(Date.now() + 50_000);
    await rowReads(page, 'org:9', ['org:9', '-', '1', '2', '1 / 1 min', utc(held!.throttledUntil!)]);
    expect(await page.locator('tr[data-key="org:9"] td[data-label="Throttled until"] time').getAttribute('datetime')).toBe(new Date(held!.throttledUntil!).toISOString());
    await shot(page, `queue-keys-rate-${LAPTOP}`);

    // half a rate: the API's refusal in the alert, nothing written
    await form.getByLabel('Key').fill('org:9');
    await form.getByLabel('Starts').fill('5');
    await form.getByLabel('Per ms').fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: /periodMs/ }).waitFor();
    expect(await org9()).toEqual(held);

    // both empty lift it: the two parked jobs readmitted, pending again
    await form.getByLabel('Key').fill('org:9');
    await form.getByLabel('Starts').fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved the rate of key org:9: 2 parked job(s) readmitted' }).waitFor();
    expect(await org9()).toEqual({ key: 'org:9', limit: null, running: 1, parked: 0, rate: null, throttledUntil: null });
    expect(await redis.raw.hexists(`${keysOf(queue).prefix}krate`, 'org:9')).toBe(0);
    await rowReads(page, 'org:9', ['org:9', '-', '1', '0', '-', '-']);
    // nothing holds them now: claimed at once, live in the table
    expect((await l.claim(10, 60_000)).jobs).toHaveLength(2);
    await rowReads(page, 'org:9', ['org:9', '-', '3', '0', '-', '-']);
    await shot(page, `queue-keys-rate-lifted-${LAPTOP}`);
  }, 60_000);

  it('fits a phone, and shows no keys section for a queue whose jobs named none', async () => {
    const queue = redis.queue<string>();
    // room for two running, one start an hour: the second job parks on the rate, the key throttled
    await queue.setKeyLimit('tenant:acme-corporation.eu-west-1', 2);
    await queue.setKeyRateLimit('tenant:acme-corporation.eu-west-1', { limit: 1, periodMs: 3_600_000 });
    const added = await queue.addBulk(['a', 'b'].map((payload) => ({ payload, keys: ['tenant:acme-corporation.eu-west-1'] })));
    await leases(queue).claim(10, 60_000);

    const narrow = await tab(NARROW);
    await open(narrow, queuePath(queue.name));
    await narrow.getByRole('table', { name: 'Concurrency keys' }).waitFor();
    const { throttledUntil } = (await queue.keyLimits())[0]!;
    expect(throttledUntil).toBeGreaterThan(Date.now());
    expect(await rowText(narrow, 'tenant:acme-corporation.eu-west-1')).toEqual(['tenant:acme-corporation.eu-west-1', '2', '1', '1', '1 / 1 h', utc(throttledUntil!)]);
    await narrow.getByRole('form', { name: 'Key rate' }).waitFor();
    expect(await scrollWidth(narrow)).toBeLessThanOrEqual(NARROW);
    await shot(narrow, `queue-keys-${NARROW}`);
    await narrow.emulateMedia({ colorScheme: 'dark' });
    await shot(narrow, `queue-keys-${NARROW}-dark`);
    await narrow.emulateMedia({ colorScheme: 'light' });

    const parked = await tab(NARROW);
    await open(parked, jobPath(queue.name, added[1]!.id));
    await parked.locator('[data-parked]').waitFor();
    expect(await scrollWidth(parked)).toBeLessThanOrEqual(NARROW);
    await shot(parked, `job-parked-${NARROW}`);

    const plain = redis.queue<string>();
    await plain.add('no keys');
    const page = await tab();
    await open(page, queuePath(plain.name));
    await page.getByRole('heading', { name: 'Groups' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Concurrency keys' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Key limit' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Key rate' }).count()).toBe(0);
  }, 60_000);
});
