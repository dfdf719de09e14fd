import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm;

/** Every import of every file under src/, resolved to a file for relative ones. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(src)) {
    const specs = [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]!);
    graph.set(
      file,
      specs.map((spec) => (spec.startsWith('.') ? resolve(dirname(file), spec).replace(/\.js$/, '.ts') : spec)),
    );
  }
  return graph;
}

describe('the dependency rule', () => {
  const graph = importGraph();
  const isCore = (file: string): boolean => !/^(node|edge|http)\//.test(relative(src, file));

  it('keeps the core free of runtimes: no node:*, ioredis, @upstash/redis or adapter imports', () => {
    const offences: string[] = [];
    for (const [file, imports] of graph) {
      if (!isCore(file)) continue;
      for (const target of imports) {
        const bad =
          target.startsWith('node:') ||
          target === 'ioredis' ||
          target.startsWith('@upstash/') ||
          (target.startsWith(src) && !isCore(target));
        if (bad) offences.push(`${relative(root, file)} imports ${relative(root, target)}`);
      }
    }
    expect(offences).toEqual([]);
  });

  it('has no circular imports', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(root, f)).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) if (graph.has(target)) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
