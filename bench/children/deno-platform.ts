import process from 'node:process';
import { createInterface } from 'node:readline';
import { serveDeno } from '../../src/deno/index.js';

/**
 * The Deno app `platform-deno` measures (bench/cases/platforms.ts), run by the real `deno`
 * binary once bundled: `serveDeno` over the queues named in `QUEUES` (comma-separated) with
 * handlers that do nothing, Redis over REST from its environment, no cron (the bench beats it by
 * hand). Its stdout is `{"url"}` once it serves, then an answer per line of stdin: `beat` runs a
 * beat (`{"beat": true}`), `close` waits for its drains and stops (`{"closed": true}`).
 */
const server = serveDeno({
  handlers: Object.fromEntries((process.env['QUEUES'] ?? '').split(',').map((queue) => [queue, () => {}])),
  schedule: false,
  port: 0,
  hostname: '127.0.0.1',
  onListen: () => {},
  closeOnSigterm: false,
  log: () => {},
});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'beat') {
    await server.beat();
    process.stdout.write('{"beat":true}\n');
  } else if (line === 'close') {
    await server.close();
    process.stdout.write('{"closed":true}\n');
    process.exit(0);
  }
}
