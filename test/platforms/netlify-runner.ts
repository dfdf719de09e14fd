import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';

/**
 * One Netlify site served on loopback by Netlify's own local runtime for functions
 * (@netlify/functions-dev, what `netlify dev` is made of): it builds each function of
 * `netlify/functions/` with zip-it-and-ship-it and runs every invocation in a thread of its own,
 * the Functions v2 bootstrap handing the default export a `Request` and Netlify's `Context`
 * (`waitUntil` included) and setting the `Netlify` global. The site's two files export the
 * functions of test/platforms/netlify-app.ts, with the `config` a user writes; the site's folder
 * is the first argument. Prints `{"ready":true,"url":...}` once it listens; killed by its PID to
 * stand for an instance cut off.
 */

/** The little of @netlify/functions-dev's FunctionsHandler the runner uses. */
interface FunctionsHandler {
  match(request: Request): Promise<{ handle(request: Request): Promise<Response> } | undefined>;
}
type FunctionsHandlerClass = new (options: Record<string, unknown>) => FunctionsHandler;

// Netlify's own local runtime (a devDependency)
const specifier = '@netlify/functions-dev';
const { FunctionsHandler } = (await import(specifier).catch((error: unknown) => {
  throw new Error(`Netlify's local functions runtime (${specifier}) could not be loaded: it is a devDependency of the repository (npm install)`, { cause: error });
})) as { FunctionsHandler: FunctionsHandlerClass };

const app = join(import.meta.dirname, 'netlify-app.ts');
// the site's folder, made by the suite inside the repository: a site's functions sit beside its
// node_modules, and the functions built there import their packages from them
const site = process.argv[2]!;
const functions = join(site, 'netlify', 'functions');
mkdirSync(functions, { recursive: true });
writeFileSync(join(site, 'package.json'), '{ "name": "emq-netlify-site", "private": true, "type": "module" }\n');
// the two files of the guide (docs/guides/netlify.md), their config as a user writes it
writeFileSync(join(functions, 'emq.mts'), `export { api as default } from ${JSON.stringify(app)};\nexport const config = { path: '/api/emq/*' };\n`);
writeFileSync(join(functions, 'emq-beat.mts'), `export { beat as default } from ${JSON.stringify(app)};\nexport const config = { schedule: '* * * * *' };\n`);

const handler = new FunctionsHandler({
  // what netlify.toml would say: nothing
  config: { get: () => ({ functions: {} }) },
  destPath: join(site, '.netlify', 'functions-serve'),
  projectRoot: site,
  settings: {},
  geolocation: { city: 'Local', country: { code: 'XX', name: 'Local' }, subdivision: { code: 'XX', name: 'Local' }, latitude: 0, longitude: 0, timezone: 'UTC' },
  userFunctionsPath: functions,
  // Netlify's limits (docs.netlify.com/build/functions/configuration): 30 s is the scheduled one, and the runtime's default
  timeouts: { syncFunctions: 30, backgroundFunctions: 900 },
});

/** The web request of `req`, as Netlify's edge hands it on. */
function webRequest(req: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const method = req.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>);
  return new Request(new URL(req.url ?? '/', origin), { method, headers, ...(body ? { body, duplex: 'half' } : {}) } as RequestInit);
}

async function serve(req: IncomingMessage, res: ServerResponse, origin: string): Promise<void> {
  const request = webRequest(req, origin);
  const match = await handler.match(request);
  const response = match ? await match.handle(request) : new Response('Not Found', { status: 404 });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  res.end();
}

const server = createServer((req, res) => {
  serve(req, res, origin).catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(String(error));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
const origin = `http://127.0.0.1:${port}`;
process.stdout.write(`${JSON.stringify({ ready: true, url: origin })}\n`);

// the invocations' threads may still hold a handler's sleep: a stop ends them with the process
process.once('SIGTERM', () => process.exit(0));
