/** `main.ts`: Deno.cron beats and Deno.serve for the API, registered at the module's top level. */
export const DENO_ENTRY = `/**
 * The echomq app for Deno (Deploy or your own): a beat a minute on Deno.cron drains the queues
 * below, and Deno.serve answers the HTTP API. A queue is its payload type in Payloads and its
 * handler in handlers.
 */
import { UnrecoverableError } from 'echomq';
import { serveDeno } from 'echomq/deno';

/** Each queue's payload type, by queue name. */
interface Payloads {
  mail: { to: string; subject?: string };
}

// at the module's top level: Deno Deploy finds a cron by running the top level
serveDeno<Payloads>({
  handlers: {
    // resolve: completed; throw: retried with its backoff; UnrecoverableError: dead at once
    mail: async (job) => {
      if (!job.payload.to.includes('@')) throw new UnrecoverableError(\`not an address: \${job.payload.to}\`);
      console.log(\`mail to \${job.payload.to} (attempt \${job.attempt} of \${job.maxAttempts})\`);
    },
  },
});
`;

/** `deno.json`: echomq from npm, the cron enabled, the task that runs it. */
export const DENO_JSON = `${JSON.stringify(
  {
    imports: { echomq: 'npm:echomq@^0.1.0' },
    unstable: ['cron'],
    tasks: { start: 'deno run --allow-net --allow-env main.ts' },
  },
  null,
  2,
)}\n`;

/** The files `emq init deno` writes, by path relative to the project. */
export function denoFiles(): ReadonlyMap<string, string> {
  return new Map([
    ['main.ts', DENO_ENTRY],
    ['deno.json', DENO_JSON],
  ]);
}
