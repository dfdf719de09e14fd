import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

/**
 * A Worker of a test's own, bundled as wrangler deploys one: `entry` (a module's source) written
 * to a temp dir and built with `wrangler deploy --dry-run` there, so the repository's wrangler.toml
 * (the shipped Worker) is not read. The path of its one module.
 *
 * @example
 * const bundlePath = buildEntryWorker(ENTRY, 'echomq-flow-test');
 */
export function buildEntryWorker(entry: string, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  writeFileSync(join(dir, 'entry.js'), entry);
  const args = ['deploy', '--dry-run', '--outdir', join(dir, 'out'), '--name', name, '--compatibility-date', '2026-04-26', '--minify', 'entry.js'];
  const run = spawnSync(process.execPath, [join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), ...args], {
    cwd: dir,
    env: { ...process.env, ...OFFLINE_WRANGLER_ENV },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${run.stdout}\n${run.stderr}`);
  return join(dir, 'out', 'entry.js');
}

/**
 * The source of a test's own Worker that reports to the test over HTTP: `report(body)` POSTs to
 * the `REPORT_URL` binding, and a scheduled event ends only once its reports are sent (a fetch left
 * pending as the event ends may be cancelled). `makeWorker` is the statements that set `worker`
 * (a `createWorker(...)`) from `env`, run once per isolate; `imports` more import lines.
 *
 * @example
 * const ENTRY = reportingWorkerEntry('worker = createWorker({ handlers: { [env.Q]: (job) => report(job.id) } });');
 */
export function reportingWorkerEntry(makeWorker: string, imports = ''): string {
  return `
import { createWorker } from ${JSON.stringify(join(root, 'src', 'edge', 'worker.ts'))};
${imports}
const sent = new Set();
let reportUrl = '';
function report(body) {
  const p = fetch(reportUrl, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.arrayBuffer()).catch(() => undefined);
  sent.add(p);
  p.finally(() => sent.delete(p));
  return p;
}
let worker;
function workerOf(env) {
  if (!worker) {
    reportUrl = env.REPORT_URL;
${makeWorker}
  }
  return worker;
}
export default {
  fetch: (request, env, ctx) => workerOf(env).fetch(request, env, ctx),
  async scheduled(controller, env, ctx) {
    await workerOf(env).scheduled(controller, env, ctx);
    while (sent.size > 0) await Promise.all([...sent]);
  },
};
`;
}
