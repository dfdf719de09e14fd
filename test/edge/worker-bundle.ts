import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** wrangler kept offline: no metrics, no error reports, no fetches from Cloudflare. */
export const OFFLINE_WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
};

/** The Worker exactly as it would deploy: `wrangler deploy --dry-run --outdir`, its one module. */
export function buildWorker(): { path: string; source: string; report: string } {
  const outdir = mkdtempSync(join(tmpdir(), 'echomq-worker-'));
  const run = spawnSync(process.execPath, [join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: root,
    env: { ...process.env, ...OFFLINE_WRANGLER_ENV },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${run.stdout}\n${run.stderr}`);
  const path = join(outdir, 'index.js');
  return { path, source: readFileSync(path, 'utf8'), report: run.stdout };
}
