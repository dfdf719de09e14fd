import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { Leases } from '../../src/lease/leases.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { rawClient } from '../helpers.js';
import { type Chromium, launchChromium } from './chromium.js';
import { startNodeTarget, type Target } from './targets.js';

/** Where the README's pictures are taken to (git-ignored): copy them to docs/images/ to publish. */
const README_SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'readme');
/** A database of the test Redis of this suite's own, so the queues page shows its queues alone. */
const DB = 11;
const TOKEN = 'readme-token';

/**
 * The README's pictures of each dashboard page, taken on `emq serve` over a queue set up as a
 * person's would be (groups with a limit, a rate and a pause, completed, dead and scheduled jobs,
 * a scheduler, a paused queue), each page checked for what it must show before it is taken.
 */
describe('the README screenshots of the dashboard', () => {
  let target: Target;
  let browser: Chromium;
  let transport: IoredisTransport;
  let deadId = '';

  beforeAll(async () => {
    const url = `${inject('redisUrl')}/${DB}`;
    const raw = rawClient();
    await raw.select(DB);
    await raw.flushdb();
    raw.disconnect();
    transport = IoredisTransport.connect(url);
    const mail = new Queue<{ to: string }>(transport, 'mail');
    for (let i = 0; i < 36; i++) await mail.add({ to: `user${i}@example.com` }, { group: `tenant-${'abcd'[i % 4]}` });
    await mail.add({ to: 'later@example.com' }, { delayMs: 3_600_000 });
    await mail.setGroupLimit('tenant-a', 2);
    await mail.setGroupRateLimit('tenant-b', { limit: 5, periodMs: 1000 });
    await mail.upsertScheduler('digest', { cron: '0 8 * * 1-5', tz: 'Europe/Berlin' }, { payload: { to: 'team@example.com' } });
    const leases = new Leases(mail);
    const claimed = (await leases.claim(24, 600_000)).jobs;
    const [dying, ...rest] = claimed;
    await leases.fail([{ id: dying!.id, token: dying!.token, error: 'Error: 550 mailbox unavailable\n    at send (mail.ts:14:11)\n    at handler (worker.ts:9:5)' }]);
    deadId = dying!.id;
    await leases.retry(rest.slice(0, 2).map((j) => ({ id: j.id, token: j.token, error: 'Error: 421 try again later' })));
    await leases.complete(rest.slice(2, 18).map((j) => ({ id: j.id, token: j.token, result: JSON.stringify({ accepted: true }) })));
    await mail.pauseGroup('tenant-c');
    const billing = new Queue(transport, 'billing');
    for (let i = 0; i < 5; i++) await billing.add({ invoice: 1000 + i });
    await billing.pause();
    const webhooks = new Queue(transport, 'webhooks');
    for (let i = 0; i < 8; i++) await webhooks.add({ event: 'order.paid', order: i });
    const hooks = new Leases(webhooks);
    const held = (await hooks.claim(8, 600_000)).jobs;
    await hooks.complete(held.slice(0, 7).map((j) => ({ id: j.id, token: j.token })));
    await hooks.fail([{ id: held[7]!.id, token: held[7]!.token, error: 'Error: endpoint answered 500' }]);

    [target, browser] = await Promise.all([startNodeTarget({ redisUrl: url, token: TOKEN }), launchChromium()]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await target?.close();
    await transport?.close();
  });

  async function shoot(path: string, name: string, ready: (page: Page) => Promise<void>, width = 1100): Promise<void> {
    const page = await browser.page(width);
    try {
      await page.goto(target.url + path);
      const form = page.getByRole('form', { name: 'Sign in' });
      if (name === 'signin') {
        await form.waitFor();
      } else {
        await form.getByLabel('API token').fill(TOKEN);
        await form.getByRole('button', { name: 'Sign in' }).click();
      }
      await ready(page);
      mkdirSync(README_SHOTS, { recursive: true });
      // a phone's picture is its first screen, as a person holding one sees it
      await page.screenshot({ path: join(README_SHOTS, `dashboard-${name}.png`), fullPage: width > 400 });
    } finally {
      await page.close();
    }
  }

  it('takes each page once it shows what it must', async () => {
    await shoot('/ui', 'queues', async (page) => {
      await expect.poll(() => page.locator('tr[data-queue]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-queue')))).toEqual(['billing', 'mail', 'webhooks']);
      expect(await page.locator('tr[data-queue="billing"]').innerText()).toContain('paused');
    });
    await shoot('/ui/queues/mail?state=completed', 'queue', async (page) => {
      await page.locator('tr[data-group="tenant-c"]').waitFor();
      expect(await page.locator('tr[data-job]').count()).toBe(16);
      expect(await page.locator('tr[data-group="tenant-c"]').innerText()).toContain('paused');
      await page.locator('tr[data-scheduler="digest"]').waitFor();
    });
    await shoot('/ui/queues/mail/groups/tenant-b', 'group', async (page) => {
      expect(await page.getByLabel('Starts').inputValue()).toBe('5');
    });
    await shoot(`/ui/queues/mail/jobs/${encodeURIComponent(deadId)}`, 'job', async (page) => {
      await page.getByLabel('Error').waitFor();
      expect(await page.getByLabel('Error').innerText()).toContain('at send (mail.ts:14:11)');
      expect(await page.getByRole('table', { name: 'Timeline' }).innerText()).toMatch(/added[\s\S]*active[\s\S]*dead/);
    });
    await shoot('/ui/queues/mail/dead', 'dead', async (page) => {
      await page.locator(`tr[data-job="${deadId}"]`).waitFor();
    });
    await shoot('/ui/queues/mail', 'queue-360', async (page) => {
      await page.locator('tr[data-group]').first().waitFor();
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    }, 360);
    await shoot('/ui', 'signin', async (page) => {
      expect(await page.locator('tr[data-queue]').count()).toBe(0);
    }, 480);
  });
});
