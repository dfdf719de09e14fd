// The stall-recovery victim for BullMQ: a worker whose processor announces its job on stdout and
// then hangs, so the bench can SIGKILL it mid-job. Args: host port queue lockDurationMs. Its
// stalled check runs as often as the rescuer's: the check takes a queue-wide lock for that long.
import { Worker } from 'bullmq';

const [host, port, queue, lockMs] = process.argv.slice(2);
const worker = new Worker(
  queue!,
  async (job) => {
    process.stdout.write(`started ${job.id}\n`);
    await new Promise(() => {});
  },
  { connection: { host: host!, port: Number(port), maxRetriesPerRequest: null }, lockDuration: Number(lockMs), stalledInterval: Number(lockMs) / 2 },
);
await worker.waitUntilReady();
process.stdout.write('ready\n');
