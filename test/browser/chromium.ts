import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Flags for a machine whose network is closed: nothing but the page under test may leave the
 * browser (no QUIC probes, no component or sync updates, no background fetches), and no GPU.
 */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Debian's chromium (`apt-get install chromium`), or `CHROMIUM_PATH`. */
export const chromiumPath = (): string => process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** A running chromium: one context on a profile of its own; each `page()` is a new tab (its own sessionStorage). */
export interface Chromium {
  readonly context: BrowserContext;
  /** A new tab, `width` CSS pixels wide (default 1280). */
  page(width?: number): Promise<Page>;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

/**
 * Launches chromium headless with `CHROMIUM_FLAGS` on a new temp `--user-data-dir` (playwright
 * passes it for a persistent context: it refuses the flag in `args`).
 *
 * @example
 * const browser = await launchChromium();
 * const page = await browser.page(360);
 * await page.goto(`${url}/ui`);
 * await browser.close();
 */
export async function launchChromium(): Promise<Chromium> {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) {
    throw new Error(`no chromium at ${executablePath}: install Debian's (apt-get install chromium, as .ci/run does) or set CHROMIUM_PATH`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'emq-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [...CHROMIUM_FLAGS],
    viewport: { width: 1280, height: 800 },
  });
  // the persistent context opens with one blank tab: each test opens its own
  await Promise.all(context.pages().map((p) => p.close()));
  return {
    context,
    page: async (width = 1280) => {
      const page = await context.newPage();
      await page.setViewportSize({ width, height: 800 });
      return page;
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where the screenshots go: `test-output/screenshots/` at the repository's root (git-ignored). */
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'screenshots');

/**
 * A full-page PNG of `page` at `test-output/screenshots/<target>-<name>.png`; the path.
 *
 * @example
 * await screenshot(page, 'node', 'queues-1280');
 */
export async function screenshot(page: Page, target: string, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${target}-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
