import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startBridge, type RunningBridge } from '../../src/node/bridge/index.js';
import { Consumer } from '../../src/node/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { type SignupPayload, signupHandler } from '../../workers/signup-handler.js';
import { until } from '../helpers.js';
import { checkInvariants } from '../invariants.js';
import { type MiniflareWorker, startMiniflareWorker } from './miniflare-worker.js';
import { buildWorker } from './worker-bundle.js';

const BRIDGE_TOKEN = 'bridge-token-for-steps';
const EMQ_TOKEN = 'worker-token-for-steps';

/**
 * The signup flow of docs/guides/steps.md against one Redis, as a user runs it: its first steps
 * on a Node consumer, its sleep ended and its wait recorded by the shipped Worker's beat, its
 * event sent over the Worker's HTTP API, its last step run in the Worker; and a signup whose
 * event never comes, timed out and reminded by a beat.
 */
describe('durable steps across the runtimes', () => {
  let bridge: RunningBridge;
  let transport: IoredisTransport;
  let worker: MiniflareWorker;
  let signups: Queue<SignupPayload>;
  let raw: Redis;
  const lines: string[] = [];

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl: inject('redisUrl'), token: BRIDGE_TOKEN, port: 0 });
    transport = IoredisTransport.connect(inject('redisUrl'));
    raw = new Redis(inject('redisUrl'));
    signups = new Queue(transport, 'signup');
    const keys = await transport.redis.keys('emq:{signup}:*');
    if (keys.length > 0) await transport.redis.del(...keys);
    worker = await startMiniflareWorker({ bundlePath: buildWorker().path, bridgeUrl: bridge.url, bridgeToken: BRIDGE_TOKEN, emqToken: EMQ_TOKEN });
  }, 120_000);
  afterAll(async () => {
    await worker?.mf.dispose();
    await transport?.close();
    raw?.disconnect();
    await bridge?.close();
  });

  const beat = async (): Promise<void> => {
    await (await worker.mf.getWorker()).scheduled({ cron: '* * * * *', scheduledTime: new Date() });
  };

  it('runs a signup’s first steps on Node, its sleep and wait in the Worker, and finishes it in the Worker on its event', async () => {
    const { id } = await signups.add({ email: 'ada@example.com', sleepMs: 4000, verifyWithinMs: 60_000 });
    const consumer = Consumer.connect<SignupPayload>(inject('redisUrl'), 'signup', signupHandler('node', (l) => lines.push(l)), { concurrency: 1 }).start();
    try {
      await until(async () => (await signups.getJob(id))?.state === 'scheduled', 10_000);
    } finally {
      await consumer.stop();
    }
    const asleep = (await signups.getJob(id))!;
    expect(asleep.steps).toMatchObject([
      { name: 'create account', state: 'done', result: { userId: `user-${id.slice(4)}`, by: 'node' } },
      { name: 'give them a day', kind: 'sleep', state: 'sleeping' },
    ]);
    // the Worker's scheduled event beats until its deadline, sleeping until the due time within it
    await beat();
    const waiting = (await signups.getJob(id))!;
    expect(waiting.state).toBe('awaiting');
    expect(waiting.steps?.[1]).toMatchObject({ state: 'done' });
    expect(waiting.steps![1]!.finishedAt).toBeGreaterThanOrEqual(asleep.runAt!);
    expect(waiting.steps?.[2]).toMatchObject({ name: 'email verified', kind: 'wait', state: 'waiting', event: 'email.verified' });
    // the event, over the Worker's API: the Worker drains the queue it resumed a job in
    const res = await fetch(`${worker.url}/v1/queues/signup/events/email.verified`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json', 'Idempotency-Key': `verified-${id.slice(4)}` },
      body: JSON.stringify({ data: { userId: `user-${id.slice(4)}` } }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: `verified-${id.slice(4)}`, resumed: 1 });
    await until(async () => (await signups.getJob(id))?.state === 'completed', 10_000);
    const done = (await signups.getJob(id))!;
    expect(done.result).toEqual({ userId: `user-${id.slice(4)}`, outcome: 'verified', by: 'edge' });
    expect(done.steps!.map((s) => [s.name, s.state])).toEqual([
      ['create account', 'done'],
      ['give them a day', 'done'],
      ['email verified', 'done'],
      ['welcome', 'done'],
    ]);
    // the account was created once, on Node: the Worker replayed it
    expect(lines.filter((l) => l.includes('creates the account'))).toHaveLength(1);
    expect(await checkInvariants(raw, 'signup')).toEqual([]);
  }, 60_000);

  it('times a signup’s wait out when its event never comes, and sends the reminder', async () => {
    const { id } = await signups.add({ email: 'bob@example.com', sleepMs: 0, verifyWithinMs: 500 });
    await beat();
    expect((await signups.getJob(id))!.state).toBe('awaiting');
    await until(async () => Date.now() >= (await signups.getJob(id))!.timeoutAt! + 50, 5_000);
    await beat();
    await until(async () => (await signups.getJob(id))?.state === 'completed', 10_000);
    const done = (await signups.getJob(id))!;
    expect(done.result).toMatchObject({ outcome: 'reminded', by: 'edge' });
    expect(done.steps?.[2]).toMatchObject({ state: 'timed-out' });
    expect(await checkInvariants(raw, 'signup')).toEqual([]);
  }, 30_000);
});
