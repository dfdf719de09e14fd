import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import * as echomq from '../../src/index.js';
import { errorCodes } from '../../src/errors.js';
import { keyspace, QUEUE_REGISTRY } from '../../src/keyspace.js';
import { leaseCount } from '../helpers.js';
import { checkInvariants } from '../invariants.js';
import { bundleForNode, type NodeBundle } from '../node-bundle.js';
import { type Snippet, snippets } from './readme-snippets.js';
import { ECHOMQ_PATHS, root, typecheck } from './typecheck.js';

/**
 * The Markdown files whose snippets run: the README, then every guide (docs/guides/), each a
 * path from the root. A guide is found by its folder, so a new one is run without a line here.
 */
const DOCS = ['README.md', ...readdirSync(join(root, 'docs', 'guides')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/guides/${name}`)];
/** The guide that holds the table of error codes (its "Configuration and errors"). */
const ERROR_TABLE = 'docs/guides/configuration.md';
const read = (doc: string): string => readFileSync(join(root, doc), 'utf8');

/**
 * The names the snippets (the README's and the guides') leave to the reader (their own code) or
 * take from an earlier block (`transport`, the Quick start's), declared for the type-check; the
 * runs get the functions from PRELUDE. A name here is a promise the docs make in their prose: keep
 * the list short.
 */
const READER_NAMES = `import type { Transport } from 'echomq';
declare global {
  /** The reader's mail sender. */
  function send(to: string, options?: { signal?: AbortSignal }): Promise<void>;
  function sendMail(to: string): Promise<void>;
  function thumbnail(url: string): Promise<void>;
  /** The Quick start's transport. */
  const transport: Transport;
}
export {};
`;

/**
 * Loaded before a snippet runs (node --import): the reader's functions, doing nothing, and a line
 * on stderr once the snippet listens for SIGTERM, so a long-running one is stopped only when it
 * is ready to stop.
 */
const PRELUDE = `globalThis.send = async () => {};
globalThis.sendMail = async () => {};
globalThis.thumbnail = async () => {};
process.on('newListener', (event) => {
  if (event === 'SIGTERM') setImmediate(() => process.stderr.write('[readme] listening for SIGTERM\\n'));
});
`;

/** How long one snippet may run, node's start included (a few tenths of a second on an idle machine). */
const RUN_TIMEOUT_MS = 20_000;
/** How long a long-running snippet runs before its SIGTERM, once it listens for one. */
const RUN_BEFORE_SIGTERM_MS = 1_000;
/** The database of the test Redis the snippets write to: their queue names are fixed (`mail`), so they keep away from the suites'. */
const SNIPPET_DB = 9;

/** A snippet and the Markdown file it is in. */
interface DocSnippet extends Snippet {
  readonly doc: string;
}
const blocks: DocSnippet[] = DOCS.flatMap((doc) => snippets(read(doc)).map((snippet) => ({ ...snippet, doc })));
/** Where each block is type-checked: a file never written, under the root, so it resolves as the project's own modules do. */
const fileOf = (b: DocSnippet): string => join(root, '.readme', `${b.doc.replace(/[/.]/g, '-')}-line-${b.line}.ts`);
/** A block's place, as an editor opens it. */
const placeOf = (b: DocSnippet, line = 1): string => `${b.doc}:${b.line + line - 1}`;

describe('README.md and the guides', () => {
  it('have TypeScript blocks, and the extraction finds markers and refuses an open block', () => {
    expect(blocks.filter((b) => b.doc === 'README.md').length, "the README's quick starts").toBeGreaterThanOrEqual(3);
    // the 16 blocks of the README before its guides moved out (issue 31), none lost in the move
    expect(blocks.length).toBeGreaterThanOrEqual(16);
    // every guide the README's feature list links is one whose snippets run here
    const linked = [...read('README.md').matchAll(/\]\((docs\/guides\/[a-z-]+\.md)[#)]/g)].map((m) => m[1]!);
    expect(linked.filter((doc) => !DOCS.includes(doc))).toEqual([]);
    const sample = ['```sh', '```ts', 'in sh', '```', '<!-- not run: a Worker -->', '', '```ts', 'a', '```', '<!-- runs until SIGTERM -->', '```typescript', 'b', 'c', '```', 'text', '```ts', 'd', '```'].join('\n');
    expect(snippets(sample)).toEqual([
      { line: 8, code: 'a', run: { kind: 'not-run', reason: 'a Worker' } },
      { line: 12, code: 'b\nc', run: { kind: 'until-sigterm' } },
      { line: 17, code: 'd', run: { kind: 'exits' } },
    ]);
    expect(() => snippets('```ts\nopen')).toThrow(/line 1 is never closed/);
  });

  // the blocks' errors only: src/ has its own checks (typecheck.ts, TypecheckScope); the program
  // is still built whole, seconds alone, far longer beside the other suites on a loaded machine
  it('type-checks every TypeScript block as a strict module importing echomq', { timeout: 120_000 }, () => {
    const globals = join(root, '.readme', 'reader-names.ts');
    const files = new Map([[globals, READER_NAMES], ...blocks.map((b) => [fileOf(b), b.code] as const)]);
    // each block a module of its own, as a file of a user's project is; strict, without the
    // unused-name checks (a snippet may name a value only to show it is there)
    const errors = typecheck(files, { moduleDetection: ts.ModuleDetectionKind.Force, noUnusedLocals: false, noUnusedParameters: false }, 'files');
    const where = new Map(blocks.map((b) => [fileOf(b), b]));
    const readable = errors.map((e) => (where.has(e.file) ? `${placeOf(where.get(e.file)!, e.line)}: ${e.message}` : `${e.file}:${e.line}: ${e.message}`));
    expect(readable).toEqual([]);
  });

  describe('runs every runnable block against the test Redis, in order, each to its exit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'echomq-readme-'));
    const url = new URL(inject('redisUrl'));
    url.pathname = `/${SNIPPET_DB}`;
    const redis = new Redis(url.toString());
    const runnable = blocks.filter((b) => b.run.kind !== 'not-run');
    /** Each runnable block a module of its own, bundled in one build (test/node-bundle.ts): `echomq` and its entries are the sources under src/. */
    let bundle: NodeBundle | undefined;
    beforeAll(async () => {
      const sources = runnable.map((b) => {
        const file = join(dir, `${b.doc.replace(/[/.]/g, '-')}-line-${b.line}.ts`);
        writeFileSync(file, b.code);
        return file;
      });
      bundle = await bundleForNode(sources, 'readme', Object.fromEntries(Object.entries(ECHOMQ_PATHS).map(([name, [path]]) => [name, path!])));
    });
    afterAll(async () => {
      await redis.flushdb();
      redis.disconnect();
      bundle?.remove();
      rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(join(dir, 'prelude.mjs'), PRELUDE);

    it(`starts on an empty database ${SNIPPET_DB}`, async () => {
      expect(await redis.dbsize(), `database ${SNIPPET_DB} of the test Redis holds keys: the docs' snippets run there`).toBe(0);
    });

    for (const snippet of blocks) {
      const title = placeOf(snippet);
      if (snippet.run.kind === 'not-run') {
        it.skip(`${title} (not run: ${snippet.run.reason})`, () => {});
        continue;
      }
      const untilSigterm = snippet.run.kind === 'until-sigterm';
      it(`${title} ${untilSigterm ? 'runs until SIGTERM, then exits 0' : 'exits 0'}`, { timeout: RUN_TIMEOUT_MS + 5_000 }, async () => {
        const child = spawn(process.execPath, ['--import', './prelude.mjs', bundle!.paths[runnable.indexOf(snippet)]!], {
          cwd: dir,
          env: { ...process.env, REDIS_URL: url.toString() },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const { code, signal, output } = await exited(child, untilSigterm);
        expect({ code, signal }, `${title} printed:\n${output}`).toEqual({ code: 0, signal: null });
        // what it left is sound, and it holds no lease: a snippet that exits settles what it took
        for (const queue of await redis.smembers(QUEUE_REGISTRY)) {
          expect(await checkInvariants(redis, queue), `${title}: queue ${queue}`).toEqual([]);
          expect(await leaseCount(redis, keyspace(queue)), `${title}: jobs of ${queue} left active`).toBe(0);
        }
      });
    }
  });

  it(`lists every error code, with its class and HTTP status (${ERROR_TABLE})`, () => {
    const rows = new Map(
      [...read(ERROR_TABLE).matchAll(/^\| `(EMQ[A-Z]+)` \| ([^|]+?) \| (\d{3}) \|/gm)].map((m) => [m[1]!, { cls: m[2]!.replace(/`/g, ''), status: Number(m[3]) }]),
    );
    for (const [code, status] of Object.entries(errorCodes)) {
      expect(rows.get(code)?.status, `${ERROR_TABLE}'s row of ${code}`).toBe(status);
    }
    for (const [code, { cls }] of rows) {
      if (cls === 'HTTP only') continue;
      const made = new (echomq[cls as keyof typeof echomq] as new (message: string) => echomq.EmqError)('m');
      expect(made.code, `${cls} carries ${code}`).toBe(code);
    }
    // and every code the code can answer or throw, the scripts' included
    const sources = [...files(join(root, 'src'), '.ts'), ...files(join(root, 'lua'), '.lua')].filter((f) => !f.endsWith('.test.ts'));
    const used = new Set(sources.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\bEMQ[A-Z]+\b/g)].map((m) => m[0])));
    expect([...used].filter((code) => !rows.has(code)).sort()).toEqual([]);
  });
});

/** Every file under `dir` whose name ends with `ext`. */
function files(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path, ext) : name.endsWith(ext) ? [path] : [];
  });
}

/**
 * Waits for `child` to exit within RUN_TIMEOUT_MS (then kills it); a long-running one gets
 * SIGTERM a moment after it starts listening for it.
 */
function exited(child: ChildProcess, untilSigterm: boolean): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  let output = '';
  let stopping = false;
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
    if (untilSigterm && !stopping && output.includes('[readme] listening for SIGTERM')) {
      stopping = true;
      setTimeout(() => child.kill('SIGTERM'), RUN_BEFORE_SIGTERM_MS);
    }
  });
  const timer = setTimeout(() => {
    output += `\n[readme] still running after ${RUN_TIMEOUT_MS} ms: killed`;
    child.kill('SIGKILL');
  }, RUN_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}
