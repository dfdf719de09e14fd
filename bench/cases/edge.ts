import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchCase, BenchContext } from '../lib/context.js';

/**
 * `edge-busy` and `edge-idle` (echomq only): Redis requests per job and per idle beat, counted
 * by the Upstash-REST bridge. They wait for the edge beat: until src/edge/ has one, a run skips
 * them with a note. The lead fills in `run` when it lands.
 */
function edgeSkip(ctx: BenchContext): string | undefined {
  const dir = join(ctx.benchDir, '..', 'src', 'edge');
  const files = existsSync(dir) ? readdirSync(dir) : [];
  return files.some((f) => /beat/.test(f)) ? 'the edge beat exists but this case is not written yet' : 'src/edge/ has no edge beat yet';
}

export const edgeBusy: BenchCase = {
  name: 'edge-busy',
  impls: ['echomq'],
  skip: edgeSkip,
  run: () => Promise.reject(new Error('edge-busy is not written yet')),
};

export const edgeIdle: BenchCase = {
  name: 'edge-idle',
  impls: ['echomq'],
  skip: edgeSkip,
  run: () => Promise.reject(new Error('edge-idle is not written yet')),
};
