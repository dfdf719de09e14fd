import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Chromium, launchChromium, screenshot } from './chromium.js';
import { startTarget, type Target, type TargetKind } from './targets.js';

/** The harness proved: chromium opens `/healthz` on both targets (replaced by the dashboard's tests). */
for (const kind of ['node', 'worker'] as const satisfies readonly TargetKind[]) {
  describe(`chromium on the ${kind} target`, () => {
    let browser: Chromium;
    let target: Target;
    beforeAll(async () => {
      [browser, target] = await Promise.all([launchChromium(), startTarget(kind, { redisUrl: inject('redisUrl'), token: 'smoke-token' })]);
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await target?.close();
    });

    it('opens /healthz and screenshots it', async () => {
      const page = await browser.page();
      const res = await page.goto(`${target.url}/healthz`);
      expect(res?.status()).toBe(200);
      expect(JSON.parse(await page.innerText('body'))).toEqual({ ok: true });
      await screenshot(page, kind, 'healthz');
    });
  });
}
