import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Handler, Queue } from '../../src/index.js';
import type { Settled } from '../../src/lease/leases.js';
import { useRedis } from '../helpers.js';
import type { Page } from 'playwright-core';
import { jobPath, NARROW, queuePath, useSignedInTabs } from './signed-in-tabs.js';
import { stepPass } from '../step-passes.js';

/** Where this suite's screenshots go: outside the repository (EMQ_STEPS_SHOTS, default `<tmp>/steps-shots`). */
const SHOTS = process.env.EMQ_STEPS_SHOTS || join(tmpdir(), 'steps-shots');

/** One row of the steps table as shown: its index, its cells' text by column, and whether it is the current one. */
interface StepRow {
  readonly index: string;
  readonly cells: Record<string, string>;
  readonly current: boolean;
}
// the browser's side as text: the project's types have no DOM (the code under test runs on servers)
const stepRows = (page: Page): Promise<StepRow[]> =>
  page.evaluate(`[...document.querySelectorAll('table[aria-label="Steps"] tbody tr')].map((row) => ({
    index: row.getAttribute('data-step') ?? '',
    cells: Object.fromEntries([...row.children].map((cell, i) => [cell.getAttribute('data-label') ?? (i === 1 ? 'Step' : String(i)), cell.innerText.trim()])),
    current: row.getAttribute('aria-current') === 'step',
  }))`);

/**
 * Durable steps on the dashboard (docs/guides/steps.md), in a real chromium against `emq serve`:
 * a job's steps as a timeline on its page, what a parked job waits for said at the top, the Send
 * event form of an awaiting job (sent through the public route after a confirmation), and the
 * queue page's awaiting tab and sleeping count. The step jobs are driven as the runtimes drive
 * them (a claim, runHandler with the leases' step host, a round: test/transport/steps.test.ts).
 */
describe('the dashboard shows durable steps (emq serve, chromium)', () => {
  const redis = useRedis();
  const token = 'ui-steps-token';
  const { tab, open, visit, shot, scrollWidth } = useSignedInTabs(token, SHOTS);

  const pass = <P>(queue: Queue<P>, handler: Handler<P>): Promise<Map<string, Settled>> => stepPass(redis.raw, queue, handler);

  /** Signs a user up: an account made, then a wait for the email's verification (an hour at most). */
  const signup: Handler<{ user: number }> = async (job, { step }) => {
    const account = await step.run('create account', () => ({ userId: job.payload.user, plan: 'free' }));
    const verified = await step.waitForEvent('verified', { event: 'email.verified', match: { userId: account.userId }, timeoutMs: 3_600_000 });
    return { account, verified };
  };

  it('shows a waiting job’s steps, sends it the event from its page after a confirmation, and shows the wait done', async () => {
    const queue = redis.queue<{ user: number }>();
    const { id } = await queue.add({ user: 42 });
    expect(await pass(queue, signup)).toEqual(new Map([[id, 'awaiting']]));
    const waiting = (await queue.getJob(id))!;
    expect(waiting.timeoutAt).toBeGreaterThan(Date.now());

    // the queue page: the awaiting tab with its count, and the job in its list
    const page = await tab();
    await open(page, queuePath(queue.name, '?state=awaiting'));
    await page.locator(`tr[data-job="${id}"]`).waitFor();
    expect(await page.getByRole('link', { name: 'awaiting (1)' }).getAttribute('aria-current')).toBe('page');
    await shot(page, 'queue-awaiting');

    await visit(page, jobPath(queue.name, id));
    const steps = page.getByRole('table', { name: 'Steps' });
    await steps.waitFor();
    expect(await page.locator('.suspension').innerText()).toMatch(/^This job is waiting for event email\.verified until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(in 60 min\), at step 2 “verified”\.$/);
    let rows = await stepRows(page);
    expect(rows.map((r) => [r.index, r.cells.Step, r.cells.Kind, r.cells.State, r.current])).toEqual([
      ['1', 'create account', 'run', 'done', false],
      ['2', 'verified', 'wait', 'waiting now', true],
    ]);
    expect(rows[0]!.cells.Attempts).toBe('1');
    expect(rows[0]!.cells.Detail).toBe('result {"userId":42,"plan":"free"}');
    expect(rows[1]!.cells.Detail).toMatch(/^event email\.verified, times out \d{4}-.*Z$/);
    await shot(page, 'job-awaiting');

    // Remove is offered, and says what it does to the wait; cancelled, nothing changes
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    expect(await page.getByRole('dialog').innerText()).toContain('it stops waiting for event email.verified');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    // the form: its event prefilled from the waiting step; data that is not JSON is refused before any request
    const form = page.getByRole('form', { name: 'Send event' });
    expect(await form.getByLabel('Event').inputValue()).toBe('email.verified');
    await form.getByLabel('Data (JSON)').fill('{userId: 42}');
    await form.getByRole('button', { name: 'Send event' }).click();
    await page.getByRole('alert').filter({ hasText: 'The event data is not JSON' }).waitFor();
    expect(await page.getByRole('dialog').isVisible()).toBe(false);
    expect((await queue.getJob(id))!.state).toBe('awaiting');

    await form.getByLabel('Data (JSON)').fill('{"userId": 42, "via": "dashboard"}');
    await form.getByRole('button', { name: 'Send event' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.innerText()).toContain(`Send event email.verified to queue ${queue.name}?`);
    await shot(page, 'job-send-event-confirm');
    await dialog.getByRole('button', { name: 'Send event', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('status').filter({ hasText: /Sent event email\.verified \(id \S+\): 1 job\(s\) resumed/ }).waitFor();

    // in Redis: resumed (pending, its wait done with the event), then completed with the event's data
    const resumed = (await queue.getJob(id))!;
    expect(['pending', 'completed']).toContain(resumed.state);
    expect(resumed.timeoutAt).toBeUndefined();
    const wait = resumed.steps![1]!;
    expect(wait).toMatchObject({ kind: 'wait', state: 'done', event: 'email.verified', result: { userId: 42, via: 'dashboard' } });
    expect(wait.eventId).toMatch(/^\d+$/);

    // the page as reloaded after the send: the wait done with the event's id, nothing parked, no form
    await page.locator('h1 .state-pending').waitFor();
    rows = await stepRows(page);
    expect(rows.map((r) => [r.cells.Step, r.cells.State, r.current])).toEqual([
      ['create account', 'done', false],
      ['verified', 'done', false],
    ]);
    expect(await steps.locator('[data-event-id]').innerText()).toBe(wait.eventId);
    expect(rows[1]!.cells.Detail).toContain(`took event id ${wait.eventId}, data {"userId":42,"via":"dashboard"}`);
    expect(await page.locator('.suspension').count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Send event' }).count()).toBe(0);
    await shot(page, 'job-resumed');

    expect(await pass(queue, signup)).toEqual(new Map([[id, 'completed']]));
    await page.locator('h1 .state-completed').waitFor();
    await shot(page, 'job-completed');
  }, 60_000);

  it('shows a sleeping job asleep until its due time, and the queue page its sleeping count', async () => {
    const queue = redis.queue<null>();
    const { id } = await queue.add(null);
    const nap: Handler<null> = async (_, { step }) => {
      await step.run('fetch profile', () => ({ name: 'Ada', langs: ['en', 'fr'], bio: 'wrote the first program '.repeat(6) }));
      await step.sleep('give them a day', 86_400_000);
      await step.run('send reminder', () => true);
    };
    expect(await pass(queue, nap)).toEqual(new Map([[id, 'scheduled']]));
    const job = (await queue.getJob(id))!;
    expect(job.steps![1]).toMatchObject({ kind: 'sleep', state: 'sleeping', until: job.runAt });

    const page = await tab();
    await open(page, jobPath(queue.name, id));
    await page.getByRole('table', { name: 'Steps' }).waitFor();
    expect(await page.locator('.suspension').innerText()).toMatch(/^This job is asleep until \d{4}-.*Z \(in 24 h\), at step 2 “give them a day”\.$/);
    const rows = await stepRows(page);
    expect(rows.map((r) => [r.cells.Step, r.cells.Kind, r.cells.State, r.current])).toEqual([
      ['fetch profile', 'run', 'done', false],
      ['give them a day', 'sleep', 'sleeping now', true],
    ]);
    expect(rows[0]!.cells.Detail).toMatch(/^result \{"name":"Ada".{40,}…$/);
    expect(rows[1]!.cells.Detail).toMatch(/^until \d{4}-.*Z$/);
    // no Send event for a job that does not wait for one; Remove, as for any job
    expect(await page.getByRole('form', { name: 'Send event' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Remove', exact: true }).waitFor();
    await shot(page, 'job-sleeping');

    await visit(page, queuePath(queue.name, '?state=scheduled'));
    await page.locator(`tr[data-job="${id}"]`).waitFor();
    expect(await page.getByRole('link', { name: 'scheduled (1, 1 sleeping)' }).getAttribute('aria-current')).toBe('page');
    expect(await page.getByRole('link', { name: 'awaiting (0)' }).count()).toBe(1);
    await shot(page, 'queue-sleeping');

    // a phone: the timeline as cards, nothing wider than the screen
    const narrow = await tab(NARROW);
    await open(narrow, jobPath(queue.name, id));
    await narrow.getByRole('table', { name: 'Steps' }).waitFor();
    expect(await scrollWidth(narrow)).toBeLessThanOrEqual(NARROW);
    await shot(narrow, `job-sleeping-${NARROW}`);
  }, 60_000);

  it('shows a job waiting for the child it invoked, linking to the child’s page', async () => {
    const parents = redis.queue<{ x: number }>();
    const children = redis.queue<{ x: number }>();
    const { id } = await parents.add({ x: 3 });
    const square: Handler<{ x: number }> = async (job, { step }) => (await step.invoke<number>('square', { queue: children.name, payload: { x: job.payload.x } })) + 1;
    expect(await pass(parents, square)).toEqual(new Map([[id, 'waiting']]));
    const child = `${id}.s1`;

    const page = await tab();
    await open(page, jobPath(parents.name, id));
    await page.getByRole('table', { name: 'Steps' }).waitFor();
    const said = page.locator('.suspension');
    expect(await said.innerText()).toBe(`This job is waiting for child ${children.name} / ${child}, at step 1 “square”.`);
    expect(await said.getByRole('link').getAttribute('href')).toBe(jobPath(children.name, child));
    const rows = await stepRows(page);
    expect(rows.map((r) => [r.cells.Step, r.cells.Kind, r.cells.State, r.current])).toEqual([['square', 'invoke', 'invoking now', true]]);
    expect(rows[0]!.cells.Detail).toBe(`child ${children.name} / ${child}`);
    await shot(page, 'job-invoking');

    expect(await pass(children, async (job) => job.payload.x * job.payload.x)).toEqual(new Map([[child, 'completed']]));
    expect(await pass(parents, square)).toEqual(new Map([[id, 'completed']]));
    await page.locator('h1 .state-completed').waitFor();
    expect((await stepRows(page))[0]!.cells.State).toBe('done');
    await shot(page, 'job-invoked');
  }, 60_000);
});
