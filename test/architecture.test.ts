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
  const folder = (file: string): string => {
    const rel = relative(src, file);
    return /^(node|edge|http)\//.test(rel) ? rel.split('/')[0]! : 'core';
  };
  /** What each folder may not import: the core and the HTTP app run in a Worker as well as on Node. */
  const forbidden: Record<string, (target: string) => boolean> = {
    core: (t) => t.startsWith('node:') || t === 'ioredis' || t.startsWith('@upstash/') || t === 'hono' || t.startsWith('hono/') || (t.startsWith(src) && folder(t) !== 'core'),
    http: (t) => t.startsWith('node:') || t === 'ioredis' || t.startsWith('@upstash/') || (t.startsWith(src) && ['node', 'edge'].includes(folder(t))),
    edge: (t) => t.startsWith('node:') || t === 'ioredis' || (t.startsWith(src) && folder(t) === 'node'),
    node: (t) => t.startsWith('@upstash/') || (t.startsWith(src) && folder(t) === 'edge'),
  };

  it('keeps the core and the HTTP app free of runtimes, and the adapters out of each other', () => {
    const offences: string[] = [];
    for (const [file, imports] of graph) {
      for (const target of imports) {
        if (forbidden[folder(file)]!(target)) offences.push(`${relative(root, file)} imports ${target.startsWith(src) ? relative(root, target) : target}`);
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
