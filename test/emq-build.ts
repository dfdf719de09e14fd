import { join } from 'node:path';
import { bundleForNode } from './node-bundle.js';

const root = join(import.meta.dirname, '..');

/** What the run's global setup built: `emq`, once for every test that starts it. */
export interface BuiltEmq {
  /** The bin, one ES module: node runs it as `npx emq` runs the built one. */
  readonly path: string;
  /** Removes it. */
  remove(): void;
}

/**
 * The `emq` bin bundled from src/ (test/node-bundle.ts) instead of started through tsx on each
 * call: a dozen suites start `emq` some 150 times.
 */
export async function buildEmq(): Promise<BuiltEmq> {
  const { paths, remove } = await bundleForNode([join(root, 'src', 'node', 'cli', 'bin.ts')], 'emq');
  return { path: paths[0]!, remove };
}
