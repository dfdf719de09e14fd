import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DENO_ENTRY } from '../../src/node/cli/init-deno.js';
import { LAMBDA_ENTRY } from '../../src/node/cli/init-lambda.js';
import { NETLIFY_API_FUNCTION, NETLIFY_BEAT_FUNCTION } from '../../src/node/cli/init-netlify.js';
import { VERCEL_API_ROUTE, VERCEL_CRON_ROUTE } from '../../src/node/cli/init-vercel.js';
import { WORKER_ENTRY } from '../../src/node/cli/init-worker.js';
import { root, typecheck } from './typecheck.js';

const fixture = join(root, 'test', 'fixtures', 'worker-handlers.ts');
/** The fixture without its directives: a file of its own beside it, never written to disk. */
const stripped = join(root, 'test', 'fixtures', 'worker-handlers.stripped.ts');
/** Where `emq init worker` writes its entry, as a user's project: here, a file never written. */
const initEntry = join(root, 'test', 'fixtures', 'init-worker', 'workers', 'index.ts');
/** Where `emq init <platform>` writes its entries, as a user's project of each: files never written. */
const platformEntries = new Map([
  [join(root, 'test', 'fixtures', 'init-lambda', 'src', 'handler.ts'), LAMBDA_ENTRY],
  [join(root, 'test', 'fixtures', 'init-vercel', 'app', 'api', 'emq', '[...path]', 'route.ts'), VERCEL_API_ROUTE],
  [join(root, 'test', 'fixtures', 'init-vercel', 'app', 'api', 'emq-cron', 'route.ts'), VERCEL_CRON_ROUTE],
  [join(root, 'test', 'fixtures', 'init-netlify', 'netlify', 'functions', 'emq.ts'), NETLIFY_API_FUNCTION],
  [join(root, 'test', 'fixtures', 'init-netlify', 'netlify', 'functions', 'emq-beat.ts'), NETLIFY_BEAT_FUNCTION],
  [join(root, 'test', 'fixtures', 'init-deno', 'main.ts'), DENO_ENTRY],
]);
const DIRECTIVE = /^(\s*)\/\/ @ts-expect-error (.+)$/;

/**
 * `createWorker` types each handler's job by its queue's payload (a map from queue name to
 * payload type, given or inferred): test/fixtures/worker-handlers.ts compiles, and each line it
 * marks `@ts-expect-error <message>` fails with that message once the directive is gone, so a
 * directive can neither hide another error nor outlive the one it stood for.
 */
describe('createWorker handler types', () => {
  const source = readFileSync(fixture, 'utf8');
  const lines = source.split('\n');
  // one program for both files: most of its time goes to the types under src/
  const errors = typecheck(
    new Map([
      [fixture, source],
      [stripped, lines.map((line) => line.replace(DIRECTIVE, '$1//')).join('\n')],
      [initEntry, WORKER_ENTRY],
      ...platformEntries,
    ]),
  );

  it('compile: a payload field of the queue type-checks', () => {
    expect(errors.filter((e) => e.file === fixture)).toEqual([]);
  });

  it('compile the Worker entry `emq init worker` writes, and every file `emq init lambda|vercel|netlify|deno` writes in TypeScript', () => {
    expect(errors.filter((e) => e.file === initEntry)).toEqual([]);
    for (const path of platformEntries.keys()) expect(errors.filter((e) => e.file === path), path).toEqual([]);
  });

  it('report no error outside the files they check', () => {
    expect(errors.filter((e) => ![fixture, stripped, initEntry, ...platformEntries.keys()].includes(e.file))).toEqual([]);
  });

  it('refuse a wrong field, a wrong type, an untyped payload, a missing or unknown queue', () => {
    const expected = lines.flatMap((line, i) => {
      const directive = DIRECTIVE.exec(line);
      return directive ? [{ line: i + 2, message: directive[2]! }] : [];
    });
    expect(expected.length).toBeGreaterThanOrEqual(6);
    const found = errors.filter((e) => e.file === stripped);
    expect(found.map((e) => e.line)).toEqual(expected.map((e) => e.line));
    for (const [i, error] of found.entries()) expect(error.message).toContain(expected[i]!.message);
  });
});
