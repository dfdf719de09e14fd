import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { type Chromium, launchChromium } from './chromium.js';
import { startNodeTarget, type Target } from './targets.js';

/** A laptop's width, and a phone's. */
export const LAPTOP = 1280;
export const NARROW = 360;

/** What a dashboard suite drives: tabs signed in to one `emq serve`, and its screenshots. */
export interface SignedInTabs {
  /** A new tab `width` px wide, closed after the test. */
  tab(width?: number): Promise<Page>;
  /** Opens `path` in `page` and signs in there (the token lives in the tab's sessionStorage). */
  open(page: Page, path: string): Promise<void>;
  /** A full-page screenshot of `page` as `<name>.png` in the suite's folder. */
  shot(page: Page, name: string): Promise<void>;
  /** Goes to `path` in a tab signed in already. */
  visit(page: Page, path: string): Promise<void>;
  /** How wide the page's content is, in px (at most the tab's width when nothing overflows). */
  scrollWidth(page: Page): Promise<number>;
}

/** The dashboard's path of a job's page, and of a queue's. */
export const jobPath = (queue: string, id: string): string => `/ui/queues/${encodeURIComponent(queue)}/jobs/${encodeURIComponent(id)}`;
export const queuePath = (queue: string, query = ''): string => `/ui/queues/${encodeURIComponent(queue)}${query}`;

/**
 * Starts `emq serve` on the run's Redis (with bearer token `token`) and a chromium for the suite
 * it is called in (before all its tests; both closed after), and closes every tab a test opened
 * after it: an open tab keeps its live connection. Screenshots go to `shots` (made if missing).
 */
export function useSignedInTabs(token: string, shots: string): SignedInTabs {
  let target: Target;
  let browser: Chromium;
  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    [target, browser] = await Promise.all([startNodeTarget({ redisUrl: inject('redisUrl'), token }), launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await target?.close();
  });
  const tabs: Page[] = [];
  afterEach(async () => {
    await Promise.all(tabs.splice(0).map((page) => page.close()));
  });
  return {
    async tab(width = LAPTOP) {
      const page = await browser.page(width);
      page.setDefaultTimeout(10_000);
      tabs.push(page);
      return page;
    },
    async open(page, path) {
      await page.goto(target.url + path);
      const form = page.getByRole('form', { name: 'Sign in' });
      await form.getByLabel('API token').fill(token);
      await form.getByRole('button', { name: 'Sign in' }).click();
    },
    visit: async (page, path) => void (await page.goto(target.url + path)),
    shot: async (page, name) => void (await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })),
    scrollWidth: (page) => page.evaluate('document.documentElement.scrollWidth'),
  };
}
