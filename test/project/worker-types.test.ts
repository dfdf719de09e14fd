import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAMBDA_ENTRY } from '../../src/node/cli/init-lambda.js';
import { WORKER_ENTRY } from '../../src/node/cli/init-worker.js';
import { root, typecheck } from './typecheck.js';

const fixture = join(root, 'test', 'fixtures', 'worker-handlers.ts');
/** The fixture without its directives: a file of its own beside it, never written to disk. */
const stripped = join(root, 'test', 'fixtures', 'worker-handlers.stripped.ts');
/** Where `emq init worker` writes its entry, as a user's project: here, a file never written. */
const initEntry = join(root, 'test', 'fixtures', 'init-worker', 'workers', 'index.ts');
/** Where `emq init lambda` writes its handler, as a user's project: a file never written. */
const lambdaEntry = join(root, 'test', 'fixtures', 'init-lambda', 'src', 'handler.ts');
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
      [lambdaEntry, LAMBDA_ENTRY],
    ]),
  );

  it('compile: a payload field of the queue type-checks', () => {
    expect(errors.filter((e) => e.file === fixture)).toEqual([]);
  });

  it('compile the Worker entry `emq init worker` writes, and the handler `emq init lambda` writes', () => {
    expect(errors.filter((e) => e.file === initEntry)).toEqual([]);
    expect(errors.filter((e) => e.file === lambdaEntry)).toEqual([]);
  });

  it('report no error outside the files they check', () => {
    expect(errors.filter((e) => ![fixture, stripped, initEntry, lambdaEntry].includes(e.file))).toEqual([]);
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
