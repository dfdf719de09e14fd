// A consumer process for the flow-faults scenario, killed by its parent (SIGKILL by PID) at
// random: one Consumer per queue named on the command line, each on its own connection. Every
// handler run records its (queue, job, lease token) in Redis before it works, and a flow parent's
// run also what it saw of its children (`job.children`: id, state, result), so the scenario can
// tell a parent run before its children finished; a run that completes returns `{id}`, the result
// the scenario checks on the row and in the parents' records. A job planned to fail fails until the
// scenario, having reprocessed it (`onFailure: 'wait'`), marks it in the retried set.
import { Redis } from 'ioredis';
import { Consumer } from '../../src/node/consumer/index.js';

const [url, runsKey, seenKey, retriedKey, ...queues] = process.argv.slice(2);
const redis = new Redis(url!);
const consumers = queues.map((queue) =>
  Consumer.connect<{ n: number; fail?: boolean; ms: number }>(
    url!,
    queue,
    async (job) => {
      const field = `${queue}|${job.id}|${job.token}`;
      await (job.children
        ? redis.multi().hincrby(runsKey!, field, 1).hset(seenKey!, field, JSON.stringify(job.children)).exec()
        : redis.hincrby(runsKey!, field, 1));
      await new Promise((resolve) => setTimeout(resolve, job.payload.ms));
      if (job.payload.fail && !(await redis.sismember(retriedKey!, `${queue}|${job.id}`))) throw new Error('chaos: fails on purpose');
      return { id: job.id };
    },
    { concurrency: 4, leaseMs: 1_000, beatMs: 500, log: false, queue: { keepCompletedMs: -1 } },
  ).start(),
);
process.stdout.write('ready\n');
process.on('SIGTERM', () => void Promise.all(consumers.map((c) => c.stop())).then(() => process.exit(0)));
