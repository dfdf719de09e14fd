import { afterAll } from 'vitest';

/**
 * Every test file of the run loads this (vitest.config.ts, setupFiles): a TimeoutOverflowWarning
 * (a delay over 2^31-1 ms handed to setTimeout or setInterval, which Node runs after 1 ms) fails
 * the file it was printed in. Every timer of the project goes through src/timers.ts, which caps
 * and re-arms, so none may appear.
 */
const overflows: string[] = [];
const onWarning = (warning: Error): void => {
  if (warning.name === 'TimeoutOverflowWarning') overflows.push(warning.message);
};
process.on('warning', onWarning);

afterAll(async () => {
  // a warning is emitted on the tick after the call that caused it
  await new Promise((resolve) => setImmediate(resolve));
  // a worker that runs file after file (isolate: false) loads this once per file
  process.off('warning', onWarning);
  if (overflows.length > 0) {
    throw new Error(`${overflows.length} TimeoutOverflowWarning(s) in this file, the first: ${overflows[0]} (arm timers through src/timers.ts)`);
  }
});
