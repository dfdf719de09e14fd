import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm;

/**
 * Every import of every module under src/ (named by its path under src/, no extension): a module
 * of src/ as `src/<path>`, a package by its name.
 */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(src)) {
    const specs = [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]!);
    graph.set(
      relative(src, file).replace(/\.tsx?$/, ''),
      specs.map((spec) => (spec.startsWith('.') ? `src/${relative(src, resolve(dirname(file), spec)).replace(/\.js$/, '')}` : spec)),
    );
  }
  return graph;
}

/** The room a module of src/ lives in: `core` for src/*.ts, else its folder path (`node/consumer`, `queue`). */
const roomOf = (module: string): string => (module.includes('/') ? dirname(module) : 'core');

/** The serverless platforms' adapters: each a small folder over src/serverless/ (docs/design/runtimes.md). */
const ADAPTERS = ['edge', 'lambda', 'vercel', 'netlify', 'deno'];
/** The runtimes', the serverless core's and the HTTP app's folders: every other folder of src/ (queue/, ops/, lease/...) is the core's. */
const OUTER = ['node', 'serverless', 'http', 'bullmq', 'bull-board', ...ADAPTERS];
const inCore = (module: string): boolean => !OUTER.some((outer) => module === outer || module.startsWith(`${outer}/`));

const isRuntime = (t: string): boolean => t.startsWith('node:') || t === 'ioredis' || t.startsWith('@upstash/');
const isHono = (t: string): boolean => t === 'hono' || t.startsWith('hono/') || t.startsWith('@hono/');
/** A platform's own package or hono's adapter for one: only that platform's adapter imports it. */
const isPlatform = (t: string): boolean =>
  ['@vercel/', '@netlify/', '@cloudflare/', '@aws-sdk/', 'hono/aws-lambda', 'hono/vercel', 'hono/netlify', 'hono/deno', 'hono/bun', 'hono/cloudflare-workers'].some((p) => t.startsWith(p)) ||
  t === 'aws-lambda';
const inRoom = (t: string, ...rooms: string[]): boolean =>
  t.startsWith('src/') && rooms.some((r) => roomOf(t.slice(4)) === r || roomOf(t.slice(4)).startsWith(`${r}/`));

/**
 * The import rules of docs/design.md ("Where things live"), each with why. A rule is a room (a
 * folder of src/, `core` for src/*.ts) and a test of what it may not import.
 */
const RULES: ReadonlyArray<{ room: (module: string) => boolean; forbids: (target: string, module: string) => boolean; why: string }> = [
  {
    room: inCore,
    forbids: (t) => isRuntime(t) || isHono(t) || inRoom(t, 'node', 'serverless', 'http', ...ADAPTERS),
    why: 'the core runs in a Worker and on Node: no runtime, no HTTP, no adapter',
  },
  {
    room: (m) => roomOf(m) === 'http' || roomOf(m).startsWith('http/'),
    forbids: (t) => isRuntime(t) || inRoom(t, 'node', 'serverless', ...ADAPTERS),
    why: 'the HTTP app is the same object on Node and in the Worker',
  },
  {
    room: (m) => roomOf(m) === 'serverless',
    forbids: (t) => t.startsWith('node:') || t === 'ioredis' || isPlatform(t) || inRoom(t, 'node', ...ADAPTERS),
    why: 'the serverless core runs on every platform: no Node, no ioredis, no platform, no adapter',
  },
  {
    room: (m) => ADAPTERS.includes(roomOf(m)),
    forbids: (t, m) => ADAPTERS.some((a) => a !== roomOf(m) && inRoom(t, a)),
    why: 'a platform adapter never imports another: what two share is the serverless core\'s',
  },
  {
    room: (m) => roomOf(m) === 'edge',
    forbids: (t) => t.startsWith('node:') || t === 'ioredis' || inRoom(t, 'node'),
    why: 'the edge runtime runs in workerd: no Node, no ioredis',
  },
  {
    room: (m) => ['vercel', 'netlify', 'deno'].includes(roomOf(m)),
    forbids: (t) => t.startsWith('node:') || t === 'ioredis' || inRoom(t, 'node'),
    why: "Vercel's and Netlify's edge runtimes and Deno have no Node of their own: TCP is the caller's `connect`",
  },
  {
    room: (m) => roomOf(m).startsWith('node'),
    forbids: (t) => t.startsWith('@upstash/') || inRoom(t, 'serverless', ...ADAPTERS),
    why: 'the Node runtime never imports the serverless one',
  },
  {
    room: (m) => roomOf(m) === 'bullmq',
    forbids: (t) => t.startsWith('@upstash/') || inRoom(t, 'serverless', 'http', 'node/cli', 'node/bridge', ...ADAPTERS),
    why: "the BullMQ layer is a Node entry over echomq's public pieces (Queue, Consumer, Flows, events), never a second state machine",
  },
  {
    room: (m) => roomOf(m) === 'bull-board',
    forbids: (t) => isRuntime(t) || inRoom(t, 'serverless', 'http', 'node', 'bullmq', ...ADAPTERS),
    why: "the bull-board adapter stands on echomq's Queue alone (an echomq/bullmq Queue is taken by its shape): no runtime, no second state machine",
  },
  {
    room: (m) => roomOf(m) !== 'bull-board',
    forbids: (t) => t.startsWith('@bull-board/'),
    why: '@bull-board/api is an optional peer: only the adapter (src/bull-board/) imports it',
  },
  {
    room: (m) => roomOf(m) === 'node/consumer',
    forbids: (t) => inRoom(t, 'node/cli', 'node/bridge', 'http'),
    why: 'the consumer is a library: the CLI and the bridge use it, never the other way',
  },
  {
    room: (m) => roomOf(m) === 'node/bridge',
    forbids: (t) => inRoom(t, 'node/cli', 'node/consumer', 'http'),
    why: 'the bridge is a REST front for Redis and nothing else',
  },
  {
    room: () => true,
    forbids: (t) => t.startsWith('@opentelemetry/'),
    why: 'OpenTelemetry is an optional peer: found by one dynamic import (src/telemetry/opentelemetry.ts), never imported statically nor named in a type',
  },
  {
    room: (m) => m !== 'ops/scripts',
    forbids: (t) => t === 'src/ops/run-scripts',
    why: 'only the script gateway (src/ops/scripts.ts) calls the transport',
  },
  {
    room: (m) => !['transport', 'index'].includes(m) && roomOf(m) !== 'ops',
    forbids: (t) => t === 'src/generated/scripts',
    why: 'a script is called through its op (src/ops/), by name and typed',
  },
  {
    room: (m) => m !== 'index' && !['ops', 'queue', 'lease', 'flows'].includes(roomOf(m)),
    forbids: (t) => t.startsWith('src/ops/'),
    why: 'the gateway (src/ops/scripts.ts) and its ops are private to the rooms that produce and control (queue/: Queue and the registry), lease (lease/) and write and relay flows (flows/)',
  },
];

describe('the dependency rules', () => {
  const graph = importGraph();

  it('hold for every import under src/', () => {
    const offences: string[] = [];
    for (const [module, imports] of graph) {
      for (const target of imports) {
        for (const rule of RULES) {
          if (rule.room(module) && rule.forbids(target, module)) offences.push(`src/${module}.ts imports ${target}: ${rule.why}`);
        }
      }
    }
    expect(offences).toEqual([]);
  });

  it('can fail: each rule catches the import it forbids', () => {
    const planted: Array<[string, string]> = [
      ['queue/queue', 'src/node/consumer/loop'],
      ['lease/leases', 'hono'],
      ['http/app', 'ioredis'],
      ['http/ui/dashboard', 'node:fs'],
      ['edge/worker', 'node:fs'],
      ['node/consumer/loop', 'src/serverless/drain'],
      ['serverless/host', 'node:async_hooks'],
      ['serverless/host', 'hono/aws-lambda'],
      ['serverless/host', 'src/edge/worker'],
      ['lambda/handler', 'src/edge/worker'],
      ['vercel/handlers', 'ioredis'],
      ['netlify/functions', 'src/node/ioredis-transport'],
      ['edge/worker', 'src/vercel/route'],
      ['queue/queue', 'src/serverless/host'],
      ['http/app', 'src/serverless/host'],
      ['node/consumer/loop', 'src/node/cli/cli'],
      ['node/bridge/bridge', 'src/node/consumer/loop'],
      ['serverless/drain', 'src/ops/run-scripts'],
      ['http/metrics', 'src/generated/scripts'],
      ['node/consumer/park', 'src/ops/scripts'],
      ['http/app', 'src/ops/claim'],
      ['ops/claim', 'src/ops/run-scripts'],
      ['ops/claim', 'node:fs'],
      ['queue/options', 'src/node/consumer/loop'],
      ['telemetry/telemetry', '@opentelemetry/api'],
      ['partitions/partitioned-queue', 'src/ops/claim'],
      ['events/events', 'hono'],
      ['bull-board/adapter', 'ioredis'],
      ['bull-board/adapter', 'src/bullmq/envelope'],
      ['bull-board/adapter', 'src/ops/get-job'],
      ['bullmq/queue', '@bull-board/api/dist/queueAdapters/base.js'],
    ];
    for (const [module, target] of planted) {
      expect(RULES.some((rule) => rule.room(module) && rule.forbids(target, module)), `${module} -> ${target}`).toBe(true);
    }
  });

  it('has no circular imports', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (module: string, path: string[]): void => {
      if (state.get(module) === 'done') return;
      if (state.get(module) === 'open') {
        cycles.push([...path.slice(path.indexOf(module)), module].join(' -> '));
        return;
      }
      state.set(module, 'open');
      for (const target of graph.get(module) ?? []) if (target.startsWith('src/') && graph.has(target.slice(4))) visit(target.slice(4), [...path, module]);
      state.set(module, 'done');
    };
    for (const module of graph.keys()) visit(module, []);
    expect(cycles).toEqual([]);
  });
});
