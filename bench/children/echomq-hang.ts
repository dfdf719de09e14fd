// The stall-recovery victim for echomq: a consumer whose handler announces its job on stdout and
// then hangs, so the bench can SIGKILL it mid-job. Args: url queue leaseMs.
import { Consumer } from '../../src/node/consumer/index.js';

const [url, queue, leaseMs] = process.argv.slice(2);
Consumer.connect(url!, queue!, async (job) => {
  process.stdout.write(`started ${job.id}\n`);
  await new Promise(() => {});
}, { leaseMs: Number(leaseMs) }).start();
process.stdout.write('ready\n');
