import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const typedocBin = join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');

/**
 * The API reference stays whole: TypeDoc over the package's entry points (typedoc.json, what
 * `npm run docs` builds into docs/api/) in validation mode, nothing written. Warnings are errors
 * there, so an exported name, or a member of one, without a doc comment fails here, and so do a
 * type the reference names but the package does not export and a broken `{@link}`.
 */
describe('the API reference', () => {
  it('covers every entry point the package exports', () => {
    const config = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { entryPoints: string[]; treatWarningsAsErrors: boolean };
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string }> };
    const entries = Object.values(pkg.exports).map((e) => e.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'));
    expect([...config.entryPoints].sort()).toEqual(entries.sort());
    expect(config.treatWarningsAsErrors).toBe(true);
  });

  it('documents every exported name: TypeDoc validates with no warning', async () => {
    let output: string;
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [typedocBin, '--emit', 'none'], {
        cwd: root,
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      });
      output = stdout + stderr;
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`typedoc --emit none failed:\n${stdout}${stderr}`);
    }
    expect(output).not.toMatch(/\[(warning|error)\]/);
  }, 120_000);
});
