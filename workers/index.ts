/**
 * The Worker entry: `fetch` is the HTTP API, `scheduled` the bounded beat. Register your own
 * handlers here by queue name; the shipped Worker has one example queue, `demo`, whose handler
 * logs its payload (workers/demo-handler.ts).
 */
import { createWorker } from '../src/edge/worker.js';
import { type DemoPayload, demoHandler } from './demo-handler.js';

export default createWorker<{ demo: DemoPayload }>({
  handlers: {
    demo: (job, { progress }) => demoHandler(job, 'edge', undefined, progress),
  },
});
