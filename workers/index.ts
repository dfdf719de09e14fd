/**
 * The Worker entry: `fetch` is the HTTP API, `scheduled` the bounded beat. Register your own
 * handlers here by queue name; the shipped Worker has two example queues whose handler logs its
 * payload (workers/demo-handler.ts): `demo`, and `demo-parts`, a partitioned queue of 8 partitions
 * (its beat drains each of them); and `signup`, the durable steps' signup flow
 * (workers/signup-handler.ts, docs/guides/steps.md).
 */
import { createWorker } from '../src/edge/worker.js';
import { type DemoPayload, demoHandler } from './demo-handler.js';
import { type SignupPayload, signupHandler } from './signup-handler.js';

export default createWorker<{ demo: DemoPayload; 'demo-parts': DemoPayload; signup: SignupPayload }>({
  handlers: {
    demo: (job, { progress }) => demoHandler(job, 'edge', undefined, progress),
    'demo-parts': (job) => demoHandler(job, 'edge'),
    signup: signupHandler('edge'),
  },
  partitions: { 'demo-parts': 8 },
});
