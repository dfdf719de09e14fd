// A consumer of a partitioned queue in a child process for the chaos scenario partition-faults,
// killed by its parent (SIGKILL by PID) at random: one Consumer over every partition (one
// subscriber connection for the doorbells), each handler run recording its attempt (job id and
// lease token) in Redis before it works; a completed run returns the payload's n doubled.
import { Redis } from 'ioredis';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';

const [url, queue, partitions, runsKey] = process.argv.slice(2);
const redis = new Redis(url!);
const transport = IoredisTransport.connect(url!);
const consumer = new Consumer<{ n: number; ms: number }>(
  transport,
  new PartitionedQueue<{ n: number; ms: number }>(transport, queue!, { partitions: Number(partitions), keepCompletedMs: -1 }),
  async (job) => {
    await redis.hincrby(runsKey!, `${job.id}|${job.token}`, 1);
    await new Promise((resolve) => setTimeout(resolve, job.payload.ms));
    return { n: job.payload.n * 2 };
  },
  // a long beat: a job waits for its doorbell's message, not for the beat, unless one was lost
  { concurrency: 6, leaseMs: 1_000, beatMs: 2_000, ownsTransport: true, log: false },
).start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
