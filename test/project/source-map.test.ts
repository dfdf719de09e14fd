import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** Every markdown file under docs/, so the map is found wherever the design keeps it. */
function docs(dir = join(root, 'docs')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return docs(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The first code block under the heading "Where things live" of the design of record. */
function mapBlock(): { file: string; lines: string[] } {
  for (const file of docs()) {
    const text = readFileSync(file, 'utf8');
    const at = text.search(/^#+ Where things live\s*$/m);
    if (at < 0) continue;
    const block = /```[a-z]*\n([\s\S]*?)\n```/.exec(text.slice(at));
    if (block) return { file: relative(root, file), lines: block[1]!.split('\n') };
  }
  throw new Error('no "Where things live" section with a code block under docs/');
}

const NAME = /(?<![\w.@/-])[A-Za-z0-9_][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_.-]+)*\/?/g;
const TOP = /^(src|lua|test|bench|tools|workers|chaos|examples|docs)\//;

/**
 * The paths a map names: each line's file and folder names (every word ending in `.ts`, `.tsx` or
 * `/`), read relative to the folder of the nearest line above it that is indented less (a line
 * at the margin starts from the root), so
 *
 *     src/node/        the Node runtime
 *       consumer/      the parked consumer: loop.ts ...
 *
 * names `src/node/`, `src/node/consumer/` and `src/node/consumer/loop.ts`.
 */
export function namedPaths(lines: readonly string[]): Set<string> {
  const named = new Set<string>();
  const stack: Array<{ indent: number; folder: string }> = [];
  const resolveIn = (base: string, word: string): string => {
    if (TOP.test(word)) return word;
    const path = posix.join(base, word);
    return word.endsWith('/') && !path.endsWith('/') ? `${path}/` : path;
  };
  for (const line of lines) {
    if (line.trim() === '') continue;
    const indent = line.length - line.trimStart().length;
    while (stack.length > 0 && stack[stack.length - 1]!.indent >= indent) stack.pop();
    let base = stack[stack.length - 1]?.folder ?? '';
    // a line that starts with a folder is that folder's: the names after it are in it
    const lead = /^[A-Za-z0-9_.-]+\/(?:[A-Za-z0-9_.-]+\/)*(?=\s|$)/.exec(line.trimStart())?.[0];
    if (lead !== undefined) {
      base = resolveIn(base, lead);
      named.add(base);
      stack.push({ indent, folder: base });
    }
    for (const [word] of line.slice(indent + (lead?.length ?? 0)).matchAll(NAME)) {
      if (/(\.tsx?|\/)$/.test(word)) named.add(resolveIn(base, word));
    }
  }
  return named;
}

/** Every source file under src/ (tests beside their code aside) and every folder, as paths from the root (`src/node/`). */
function sourceTree(dir = join(root, 'src')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const rel = relative(root, path).split('\\').join('/');
    if (statSync(path).isDirectory()) return [`${rel}/`, ...sourceTree(path)];
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [rel] : [];
  });
}

/** The files and folders of `tree` that no line of the map names. */
export function offMap(tree: readonly string[], named: ReadonlySet<string>): string[] {
  return tree.filter((path) => !named.has(path));
}

describe('the map of the source (docs/design, "Where things live")', () => {
  const { file, lines } = mapBlock();
  const named = namedPaths(lines);

  it(`names every folder and every source file of src/ (${file})`, () => {
    expect(offMap(sourceTree(), named)).toEqual([]);
  });

  it('names nothing that is not there', () => {
    const tree = new Set(['src/', ...sourceTree()]);
    const stale = [...named].filter((path) => path.startsWith('src/') && !tree.has(path));
    expect(stale).toEqual([]);
  });

  it('can fail: a file added off the map, or a folder, is reported', () => {
    const tree = [...sourceTree(), 'src/queue/off-the-map.ts', 'src/nowhere/'];
    expect(offMap(tree, named)).toEqual(['src/queue/off-the-map.ts', 'src/nowhere/']);
    const nested = namedPaths(['src/            the core', '  node/          the runtime: a.ts', '    consumer/    the loop: loop.ts, park.ts', '  b.ts']);
    expect([...nested].sort()).toEqual(['src/', 'src/b.ts', 'src/node/', 'src/node/a.ts', 'src/node/consumer/', 'src/node/consumer/loop.ts', 'src/node/consumer/park.ts']);
  });
});
