import { afterEach, describe, expect, inject, it } from 'vitest';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { setTimerCap } from '../../src/timers.js';
import type { BlockingTransport, ParkedReply, Reply, ScriptCall } from '../../src/transport.js';
import { keysOf, sleep, until, useRedis } from '../helpers.js';

const DAY = 86_400_000;

/** A real ioredis transport that counts what it sends: script round trips and parks. */
class CountingTransport extends IoredisTransport {
  sent = 0;
  override evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    this.sent++;
    return super.evalsha(calls);
  }
  override eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    this.sent++;
    return super.eval(calls);
  }
  override blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    this.sent++;
    return super.blpop(keys, timeoutMs);
  }
  override blpopThen(keys: readonly string[], timeoutMs: number, call: ScriptCall): Promise<ParkedReply> {
    this.sent++;
    return super.blpopThen(keys, timeoutMs, call);
  }
}

/** Counts the timers this process arms while `during` runs (every setTimeout and setInterval call), and the warnings it emits. */
async function countTimers(during: () => Promise<void>): Promise<{ armed: number; warnings: string[] }> {
  const realTimeout = globalThis.setTimeout;
  const realInterval = globalThis.setInterval;
  let armed = 0;
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    armed++;
    return realTimeout(...args);
  }) as typeof setTimeout;
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
    armed++;
    return realInterval(...args);
  }) as typeof setInterval;
  try {
    await during();
  } finally {
    globalThis.setTimeout = realTimeout;
    globalThis.setInterval = realInterval;
    // a warning is emitted on the next tick after the call that caused it
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
  }
  return { armed, warnings };
}

/**
 * setTimeout takes at most 2^31-1 ms (24.8 days) and runs a longer delay after 1 ms: a consumer
 * whose next due time was further away woke every millisecond. Every timer now goes through
 * src/timers.ts, which waits at most that cap at a time and re-arms from there.
 */
describe('due times past the 24.8-day timer cap', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const stops: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  function start(name: string, transport: BlockingTransport, seen: Array<{ id: string; at: number }>, beatMs: number): Consumer<unknown> {
    const consumer = new Consumer<unknown>(
      transport,
      name,
      (job) => {
        seen.push({ id: job.id, at: Date.now() });
      },
      { beatMs, ownsTransport: true },
    ).start();
    stops.push(() => consumer.stop(1_000));
    return consumer;
  }

  it('a consumer parked on a job due in 30 days and a monthly scheduler sends only its beats and arms no timer more often than its beat', async () => {
    const queue = redis.queue();
    const { id } = await queue.add({ reminder: true }, { delayMs: 30 * DAY });
    // monthly, from 40 days on: its next slot is past the cap whatever today's date
    const { nextRunAt } = await queue.upsertScheduler('monthly', { cron: '0 0 1 * *', startAt: Date.now() + 40 * DAY }, { payload: 'report' });
    expect(nextRunAt! - Date.now()).toBeGreaterThan(2 ** 31);

    const transport = new CountingTransport(IoredisTransport.connect(url).redis, { owned: true });
    const seen: Array<{ id: string; at: number }> = [];
    const beatMs = 1_000;
    start(queue.name, transport, seen, beatMs);
    await until(() => transport.sent >= 1);
    await sleep(300); // parked: its first beat armed the due timer 30 days out

    const windowMs = 3_000;
    const sentBefore = transport.sent;
    const { armed, warnings } = await countTimers(() => sleep(windowMs));
    const sent = transport.sent - sentBefore;

    expect(warnings).toEqual([]);
    expect(seen).toEqual([]);
    // one park (BLPOP with its claim behind it) a beat, and at most a call more each for what the beat finds
    const beats = windowMs / beatMs + 1;
    expect(sent).toBeLessThanOrEqual(2 * beats);
    // the timers of its beats and of this test's sleep, a few each: it spun at ~1,000 a second before the fix
    expect(armed).toBeLessThanOrEqual(10 * beats);
    expect(await redis.raw.zscore(keysOf(queue).key('scheduled'), id!)).not.toBeNull();
  });

  it('a job due just past the cap starts on time: the timer waits the cap and re-arms until its due time', async () => {
    const restore = setTimerCap(200);
    try {
      const queue = redis.queue();
      const seen: Array<{ id: string; at: number }> = [];
      // a beat far off, so only the due timer can start the job on time
      start(queue.name, IoredisTransport.connect(url), seen, 60_000);
      await sleep(200);
      const { id } = await queue.add({ late: false }, { delayMs: 1_050 });
      const dueAt = Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), id!));
      const { armed, warnings } = await countTimers(() => until(() => seen.length === 1, 5_000));
      expect(warnings).toEqual([]);
      expect(seen[0]!.id).toBe(id);
      // the test's Redis runs on this host: the server's ms and Date.now() agree
      expect(seen[0]!.at - dueAt).toBeGreaterThanOrEqual(-2);
      expect(seen[0]!.at - dueAt).toBeLessThan(150);
      // it went through the re-arms: at least five stretches of at most 200 ms
      expect(armed).toBeGreaterThanOrEqual(5);
    } finally {
      restore();
    }
  });
});
