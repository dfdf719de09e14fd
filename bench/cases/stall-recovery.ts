import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { bullQueue, bullWorker, echoQueue } from '../lib/impls.js';
import { round, sleep, until } from '../lib/stats.js';

const LEASE_MS = 2_000;

/** Spawns a victim in a child process and resolves once it is ready; `out` collects its stdout. */
async function spawnVictim(script: string, args: string[]): Promise<{ child: ChildProcess; out: () => string }> {
  let out = '';
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await until(() => out.includes('ready') || child.exitCode !== null, 20_000, 'the victim to start', 10);
  if (child.exitCode !== null) throw new Error(`bench: the stall victim exited with ${child.exitCode}`);
  return { child, out: () => out };
}

/** One sample: the victim takes a job, a rescuer starts, the victim is SIGKILLed after `holdMs`; ms from kill to the rescuer's handler start. */
async function sample(ctx: BenchContext, impl: Impl, holdMs: number): Promise<number> {
  const name = benchQueueName('stall');
  let rescuedAt = 0;
  const rescue = async (): Promise<void> => {
    rescuedAt ||= performance.now();
  };
  const script = join(ctx.benchDir, 'children', `${impl}-hang.ts`);
  let add: () => Promise<unknown>;
  let startRescuer: () => Promise<void>;
  let stop: () => Promise<void> = async () => {};
  let victim: { child: ChildProcess; out: () => string };
  if (impl === 'echomq') {
    victim = await spawnVictim(script, [ctx.url, name, String(LEASE_MS)]);
    const producer = echoQueue(ctx, name);
    add = () => producer.queue.add({ stall: true });
    startRescuer = async () => {
      const rescuer = echoQueue(ctx, name);
      const consumer = new Consumer(rescuer.transport, rescuer.queue, rescue, { leaseMs: LEASE_MS }).start();
      stop = async () => {
        await consumer.stop();
        await Promise.all([rescuer.transport.close(), producer.transport.close()]);
      };
    };
  } else {
    victim = await spawnVictim(script, [ctx.host, String(ctx.port), name, String(LEASE_MS)]);
    const queue = bullQueue(ctx, name);
    add = () => queue.add('job', { stall: true });
    startRescuer = async () => {
      // BullMQ finds a stalled job only in its stalled-job check: run it twice per lease (its
      // default is every 30 s, which would make this case measure the setting, not the design).
      const worker = bullWorker(ctx, name, rescue, { lockDuration: LEASE_MS, stalledInterval: LEASE_MS / 2 });
      await worker.waitUntilReady();
      void worker.run();
      stop = async () => {
        await worker.close();
        await queue.close();
      };
    };
  }
  try {
    await add();
    await until(() => victim.out().includes('started'), 10_000, 'the victim to take the job');
    await startRescuer();
    await sleep(holdMs);
    victim.child.kill('SIGKILL');
    const killedAt = performance.now();
    await until(() => rescuedAt > 0, LEASE_MS * 10, 'the stalled job to be picked up again', 1);
    return rescuedAt - killedAt;
  } finally {
    if (victim.child.exitCode === null) victim.child.kill('SIGKILL');
    await stop();
  }
}

/**
 * `stall-recovery`: a consumer in a child process is SIGKILLed (by its PID) while it holds a job
 * under a 2 s lease; another consumer, already running, picks the job up again. recover_ms is
 * the worst sample from kill to re-pickup; the kill lands at a different point of the lease
 * renewal cycle in each sample.
 */
export const stallRecovery: BenchCase = {
  name: 'stall-recovery',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const holds = sized(ctx, { full: [150, 420, 690, 960, 1230], quick: [300], smoke: [300] });
    const samples: number[] = [];
    for (const hold of holds) samples.push(await sample(ctx, impl, hold));
    return {
      n: samples.length,
      lease_ms: LEASE_MS,
      recover_ms: round(Math.max(...samples), 0),
      p50_ms: round([...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!, 0),
    };
  },
};
