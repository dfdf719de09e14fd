import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** `emq init` found files it would overwrite: nothing was written. */
export class WouldOverwriteError extends Error {
  constructor(readonly paths: readonly string[]) {
    super(`${paths.join(' and ')} already ${paths.length === 1 ? 'exists' : 'exist'}: nothing written (--force overwrites)`);
    this.name = 'WouldOverwriteError';
  }
}

/** A project name a platform takes: lowercase letters, digits and dashes, at most 63. */
export function projectName(from: string): string {
  const name = from
    .toLowerCase()
    .replace(/^@[^/]*\//, '')
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name || 'echomq';
}

/**
 * Writes `files` (path relative to `dir` to text) into `dir`, its folders made as needed. Writes
 * nothing when any of them exists, unless `force`. Resolves to the paths written.
 *
 * @example
 * await writeStarterFiles(process.cwd(), new Map([['template.yaml', text]]), false);
 */
export async function writeStarterFiles(dir: string, files: ReadonlyMap<string, string>, force: boolean): Promise<string[]> {
  const existing = [...files.keys()].filter((path) => existsSync(join(dir, path)));
  if (existing.length > 0 && !force) throw new WouldOverwriteError(existing);
  for (const [path, text] of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return [...files.keys()];
}

/**
 * The one typed queue of a starter whose files each hold their handlers (a Vercel route, a Netlify
 * function: each is a function of its own on its platform): its payload type and its handler.
 */
export const STARTER_HANDLERS = `/** Each queue's payload type, by queue name. */
interface Payloads {
  mail: { to: string; subject?: string };
}

const handlers = {
  // resolve: completed; throw: retried with its backoff; UnrecoverableError: dead at once
  mail: async (job: { payload: Payloads['mail']; attempt: number; maxAttempts: number }) => {
    if (!job.payload.to.includes('@')) throw new UnrecoverableError(\`not an address: \${job.payload.to}\`);
    console.log(\`mail to \${job.payload.to} (attempt \${job.attempt} of \${job.maxAttempts})\`);
  },
};
`;
