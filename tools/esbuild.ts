import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The part of esbuild's API the repository's bundling uses. */
export interface Esbuild {
  build(options: Record<string, unknown>): Promise<{ errors: unknown[]; outputFiles?: Array<{ text: string; contents: Uint8Array }> }>;
}

/**
 * esbuild as tsx has it (tsx's own dependency): what the tests, the examples and the bench bundle
 * with, one version for all, none of it a dependency of its own.
 */
export function esbuild(): Esbuild {
  return createRequire(createRequire(join(root, 'package.json')).resolve('tsx'))('esbuild') as Esbuild;
}

/**
 * A module (TypeScript, a path) as one script for Vercel's Edge runtime (`edge-runtime`): for the
 * browser platform, with the conditions Vercel's Edge builds resolve packages with, nothing left
 * outside. What test/platforms/vercel.test.ts runs and `npm start -- --platform vercel` serves.
 */
export async function bundleForVercelEdge(entry: string): Promise<string> {
  const built = await esbuild().build({
    entryPoints: [entry],
    absWorkingDir: root,
    tsconfig: join(root, 'tsconfig.json'),
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    conditions: ['edge-light', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'error',
  });
  return built.outputFiles![0]!.text;
}
