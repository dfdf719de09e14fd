// A consumer process for the steps-faults scenario, killed by its parent (SIGKILL by PID) at
// random: a Consumer of the step jobs and one of the children they invoke, each on its own
// connection, the handlers of chaos/lib/steps-jobs.ts. A counted step whose step.run threw is
// noted in Redis (best effort: a kill explains what it loses).
import { Redis } from 'ioredis';
import { Consumer } from '../../src/node/consumer/index.js';
import { STEPS_KIDS, STEPS_QUEUE, type StepsPayload, stepsHandler, stepsKeys, stepsKidHandler } from '../lib/steps-jobs.js';

const [url] = process.argv.slice(2);
const fx = new Redis(url!);
fx.on('error', () => {}); // Redis restarted by the scenario: ioredis reconnects
const noted = (failure: object): void => void fx.rpush(stepsKeys.failures, JSON.stringify(failure)).catch(() => {});
const options = { concurrency: 4, leaseMs: 1_000, beatMs: 500, log: false, queue: { keepCompletedMs: -1 } } as const;
const consumers = [
  Consumer.connect<StepsPayload>(url!, STEPS_QUEUE, stepsHandler(fx, `node:${process.pid}`, noted), options).start(),
  Consumer.connect<{ n: number }>(url!, STEPS_KIDS, stepsKidHandler, options).start(),
];
process.stdout.write('ready\n');
process.on('SIGTERM', () => void Promise.all(consumers.map((c) => c.stop())).then(() => process.exit(0)));
