/**
 * Builds src/generated/scripts.ts from lua/: one entry per script with its flattened source and
 * sha1, so the Worker bundle and Node load byte-identical scripts and nothing reads files at
 * run time. Run with `npm run build:lua` after editing lua/; a test fails when the committed
 * module is stale.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleLua } from './lua-bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const luaDir = join(root, 'lua');
export const generatedPath = join(root, 'src', 'generated', 'scripts.ts');

const readInclude = (name: string): string | undefined => {
  try {
    return readFileSync(join(luaDir, 'includes', `${name}.lua`), 'utf8');
  } catch {
    return undefined;
  }
};

const camel = (file: string): string =>
  file.replace(/\.lua$/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** `text` as a TypeScript template literal that evaluates to exactly `text`, lines kept. */
const templateLiteral = (text: string): string =>
  '`' + text.replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${') + '`';

/** The generated module's text, from the scripts in lua/. */
export function renderScripts(): string {
  const files = readdirSync(luaDir)
    .filter((f) => f.endsWith('.lua'))
    .sort();
  const entries = files.map((file) => {
    const lua = bundleLua(file, readFileSync(join(luaDir, file), 'utf8'), readInclude);
    const sha1 = createHash('sha1').update(lua).digest('hex');
    const name = camel(file);
    return `  ${name}: {\n    name: ${JSON.stringify(name)},\n    sha1: ${JSON.stringify(sha1)},\n    lua: ${templateLiteral(lua)},\n  },`;
  });
  return [
    '// DO NOT EDIT: generated from lua/ by tools/build-lua.ts (npm run build:lua).',
    '// Each script is flattened (its includes written in once) and hashed here, so every runtime',
    '// loads byte-identical source with the same sha1.',
    '',
    '/** One flattened Lua script: its name, sha1 and source. */',
    'export interface ScriptSource {',
    '  /** The script\'s name: its file in lua/ without `.lua`. */',
    '  readonly name: string;',
    '  /** The sha1 of `lua`, for EVALSHA. */',
    '  readonly sha1: string;',
    '  /** The source with its includes flattened in, as EVAL sends it. */',
    '  readonly lua: string;',
    '}',
    '',
    'export const scripts = {',
    ...entries,
    '} satisfies Record<string, ScriptSource>;',
    '',
    '/** The name of a script in lua/, in camelCase. */',
    'export type ScriptName = keyof typeof scripts;',
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(generatedPath, renderScripts());
  console.log(`wrote ${generatedPath.slice(root.length + 1)}`);
}
