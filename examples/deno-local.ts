/**
 * `npm start -- --platform deno`: the Deno app of the local stack, in place of the Worker. The app
 * (examples/deno-local-app.ts) is `serveDeno` with the shipped Worker's queues and handlers
 * (workers/demo-handler.ts, printing `[deno]`), over @upstash/redis through the local REST bridge,
 * as a Deno Deploy app over Upstash. It runs under the real runtime, the `deno` binary of the
 * `deno` npm package: bundled with esbuild into one module first (Deno does not map `./x.js`
 * imports to `./x.ts`), then `deno run --allow-net --allow-env` with DENO_DIR a temp dir, on a free
 * loopback port. No Deno.cron (it fires once a minute at best): `beat()` writes a `beat` line to
 * its stdin, and the app runs the handle's `beat()`. Its stdout and stderr are relayed to the
 * stack's output (the handler's `[deno]` lines as they are). `close()` stops it by its PID.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { esbuild } from '../tools/esbuild.js';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The `deno` npm package's binary (devDependencies). */
const DENO = join(root, 'node_modules', '.bin', 'deno');
/** What `serveDeno` needs with `schedule: false`: the network (its server, the bridge) and the environment. */
const DENO_FLAGS = ['run', '--allow-net', '--allow-env'];
/** How long the app may take to serve: a cold deno binary on a busy machine. */
const READY_WITHIN_MS = 30_000;

/** The Deno app as the local stack drives it. */
export interface LocalDeno {
  /** Where it serves the API, on loopback. */
  readonly url: string;
  /** Its process id. */
  readonly pid: number;
  /** One beat (a `beat` line on its stdin), what Deno.cron would fire. */
  beat(): void;
  /** Stops it (SIGTERM by its PID, SIGKILL if it lingers) and removes its temp dir. */
  close(): Promise<void>;
}

/**
 * examples/deno-local-app.ts as one ES module in `dir`, with its packages: esbuild as tsx has it
 * (tsx's own dependency), as test/node-bundle.ts bundles the Deno suite's app.
 */
async function bundleApp(dir: string): Promise<string> {
  const out = join(dir, 'app.mjs');
  await esbuild().build({
    entryPoints: [join(root, 'examples', 'deno-local-app.ts')],
    outfile: out,
    absWorkingDir: root,
    tsconfig: join(root, 'tsconfig.json'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    // a CommonJS package calls require: an ES module has none of its own (Deno's node:module makes one)
    banner: { js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);" },
    target: 'es2022',
    logLevel: 'error',
  });
  return out;
}

/**
 * Bundles and starts the app on `restUrl` (the bridge) with `token`; `say` prints its lines.
 *
 * @throws Error when the deno binary does not start, or the app does not serve within 30 s
 * @example
 * const app = await startLocalDeno(bridge.url, token, say);
 * setInterval(() => app.beat(), 10_000);
 */
export async function startLocalDeno(restUrl: string, token: string, say: (line: string) => void): Promise<LocalDeno> {
  const dir = mkdtempSync(join(tmpdir(), 'echomq-start-deno-'));
  let child: ChildProcessWithoutNullStreams | undefined;
  try {
    const bundle = await bundleApp(dir);
    const env = {
      PATH: process.env['PATH'] ?? '',
      // its own cache, in the temp dir: nothing of the user's Deno setup, nothing left behind
      DENO_DIR: join(dir, 'deno-dir'),
      DENO_NO_UPDATE_CHECK: '1',
      NO_COLOR: '1',
      UPSTASH_REDIS_REST_URL: restUrl,
      UPSTASH_REDIS_REST_TOKEN: token,
      EMQ_LOCAL_DEV: '1',
      EMQ_BEAT_DEADLINE_MS: '8000',
      EMQ_JOB_TIMEOUT_MS: '5000',
    };
    // cwd the temp dir: no deno.json or package.json of the project read as the app's config; a
    // process group of its own: a Ctrl-C at the terminal reaches the stack alone, which stops it
    // (SIGTERM, a graceful close); the stack gone without stopping it, its stdin ends and it closes
    const started = spawn(DENO, [...DENO_FLAGS, bundle], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    child = started;
    // a beat line written as it exits: the pipe's EPIPE is no error of the stack's
    started.stdin.on('error', () => {});
    const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    /** Its last lines on stderr, for the message when it ends at start. */
    const stderr: string[] = [];
    const ready = new Promise<string>((resolve, reject) => {
      started.once('error', reject);
      void exited.then(() => reject(new Error(`deno exited (${started.exitCode ?? started.signalCode}) before it served: ${stderr.join(' | ')}`)));
      createInterface({ input: started.stdout }).on('line', (line) => {
        if (line.startsWith('[deno]')) return say(line); // the demo handler's lines (which runtime ran what), the beats'
        if (line.startsWith('{"ready"')) return resolve((JSON.parse(line) as { url: string }).url);
        if (line.trim() !== '') say(`deno: ${line}`);
      });
      // the adapter's errors and warnings (the app writes nothing of its routine there), Deno's own
      createInterface({ input: started.stderr }).on('line', (line) => {
        if (stderr.push(line) > 3) stderr.shift();
        if (line.trim() !== '') say(`deno: ${line.slice(0, 300)}`);
      });
    });
    const timeUp = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`deno did not serve within ${READY_WITHIN_MS / 1000} s`)), READY_WITHIN_MS).unref());
    const served = await Promise.race([ready, timeUp]);
    let closing: Promise<void> | undefined;
    void exited.then(() => {
      if (!closing) say(`deno: the app exited (${started.exitCode ?? started.signalCode}) while the stack runs`);
    });
    return {
      url: served,
      pid: started.pid!,
      beat: () => {
        if (started.exitCode === null && started.signalCode === null) started.stdin.write('beat\n');
      },
      close: () =>
        (closing ??= (async () => {
          if (started.exitCode === null && started.signalCode === null) {
            started.kill('SIGTERM');
            // it closes within 2 s (its closeWithinMs), then exits
            const lingers = setTimeout(() => started.kill('SIGKILL'), 4_000);
            await exited;
            clearTimeout(lingers);
          }
          rmSync(dir, { recursive: true, force: true });
        })()),
    };
  } catch (error) {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
