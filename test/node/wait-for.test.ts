import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { JobFailedError, Queue, type QueueEvent } from '../../src/index.js';
import { decodeEntry } from '../../src/events/decode.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { scripts } from '../../src/generated/scripts.js';
import type { ScriptCall } from '../../src/transport.js';
import { keysOf, queueName, sleep, until, useRedis } from '../helpers.js';

/**
 * Subscribing on Node: waiters, iterators and a Node consumer together, and the one parked
 * connection (XREAD BLOCK) a queue's subscribers share on a transport.
 */
describe('waitFor and events() on Node', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** A transport whose connections carry a name of their own, so CLIENT LIST tells them apart. */
  function namedTransport(): { transport: IoredisTransport; name: string } {
    const name = `wait-${randomBytes(4).toString('hex')}`;
    const transport = IoredisTransport.connect(url, { connectionName: name });
    closing.push(() => transport.close());
    return { transport, name };
  }

  /** How many of `name`'s connections are parked on XREAD. */
  async function parkedReads(name: string): Promise<number> {
    const list = (await redis.raw.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `) && line.includes(' cmd=xread')).length;
  }

  function consume<P>(queue: Queue<P>, handler: (payload: P) => unknown): void {
    const consumer = new Consumer<P>(IoredisTransport.connect(url), queue, (job) => handler(job.payload), { beatMs: 10_000, ownsTransport: true });
    closing.push(() => consumer.stop(1_000));
    consumer.start();
  }

  it('waitFor resolves for a job a Node consumer completes and rejects for one that ends dead; addAndWait the same', async () => {
    const queue = redis.queue<number>();
    const { id } = await queue.add(21);
    const waiting = queue.waitFor(id, { timeoutMs: 10_000 });
    consume(queue, (n) => {
      if (n < 0) throw new Error(`negative: ${n}`);
      return { doubled: n * 2 };
    });
    await expect(waiting).resolves.toEqual({ doubled: 42 });
    await expect(queue.addAndWait(5, { timeoutMs: 10_000 })).resolves.toMatchObject({ result: { doubled: 10 } });
    const error = await queue.addAndWait(-1, { maxAttempts: 1, timeoutMs: 10_000 }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect((error as JobFailedError).jobError).toMatch(/^Error: negative: -1/);
  });

  it('many waiters and iterators of one queue share one parked connection, dropped when the last one leaves', async () => {
    const { transport, name } = namedTransport();
    const queue = new Queue<number>(transport, queueName());
    closing.push(async () => void (await redis.raw.del(...(await redis.raw.keys(`emq:{${queue.name}}:*`)), 'none')));
    const ids = (await queue.addBulk(Array.from({ length: 40 }, (_, i) => ({ payload: i })))).map((r) => r.id);
    const stop = new AbortController();
    const seen: QueueEvent[][] = [[], [], []];
    const iterators = seen.map(async (into) => {
      for await (const e of queue.events({ after: '0', signal: stop.signal })) into.push(e);
    });
    const waiters = ids.map((id) => queue.waitFor(id, { timeoutMs: 20_000 }));
    await until(async () => (await parkedReads(name)) === 1);
    await until(() => seen.every((s) => s.length === 40)); // the 40 `added`
    expect(await parkedReads(name)).toBe(1);
    consume(queue, (n) => n + 1);
    expect(await Promise.all(waiters)).toEqual(ids.map((_, i) => i + 1));
    // every iterator saw the same events, those the stream holds
    const raw = await redis.raw.xrange(keysOf(queue).key('events'), '-', '+');
    const expected = raw.flatMap(([id, fields]) => decodeEntry(id, fields).events);
    await until(() => seen.every((s) => s.length === expected.length));
    for (const s of seen) expect(s).toEqual(expected);
    expect(await parkedReads(name)).toBe(1);
    stop.abort();
    await Promise.all(iterators);
    await until(async () => (await parkedReads(name)) === 0);
  });

  it('a subscriber joining a running reader pages on while a page may have stopped short of the end, and loses nothing', async () => {
    const { transport } = namedTransport();
    const queue = new Queue<number>(transport, queueName());
    closing.push(async () => void (await redis.raw.del(...(await redis.raw.keys(`emq:{${queue.name}}:*`)), 'none')));
    const stop = new AbortController();
    const first: QueueEvent[] = [];
    const running = (async () => {
      for await (const e of queue.events({ signal: stop.signal })) first.push(e);
    })();
    await sleep(50); // the shared reader is parked
    // three entries of 400 events each: a page of 1000 events holds two (800: it may have stopped
    // short of the end), and the shared reader has read all three before the second subscriber joins
    for (let i = 0; i < 3; i++) await queue.addBulk(Array.from({ length: 400 }, (_, j) => ({ payload: i * 400 + j })));
    await until(() => first.length === 1200);
    const second: QueueEvent[] = [];
    const late = (async () => {
      for await (const e of queue.events({ after: '0', signal: stop.signal })) second.push(e);
    })();
    await until(() => second.length >= 1200);
    await sleep(50);
    expect(second).toEqual(first);
    stop.abort();
    await Promise.all([running, late]);
  });

  it('a wait that joins a parked reader before its enqueue reads no catch-up page, and sees its job end', async () => {
    const { transport } = namedTransport();
    let pages = 0;
    // counts the calls of readEvents (the catch-up page) among the transport's script calls
    const counted = new Proxy(transport, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop !== 'evalsha' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return (calls: readonly ScriptCall[], ...rest: unknown[]) => {
          pages += calls.filter((c) => c.script === scripts.readEvents).length;
          return (value as (...a: unknown[]) => unknown).call(target, calls, ...rest);
        };
      },
    });
    const queue = new Queue<number>(counted, queueName());
    closing.push(async () => void (await redis.raw.del(...(await redis.raw.keys(`emq:{${queue.name}}:*`)), 'none')));
    consume(queue, (n) => n * 3);
    // the first wait starts the shared reader, catching up once
    await expect(queue.addAndWait(1, { timeoutMs: 10_000 })).resolves.toMatchObject({ result: 3 });
    expect(pages).toBe(1);
    // the next ones, one after another and at once, find it parked (it lingers between them)
    for (let i = 2; i <= 6; i++) await expect(queue.addAndWait(i, { timeoutMs: 10_000 })).resolves.toMatchObject({ result: i * 3 });
    const results = await Promise.all([7, 8, 9].map((n) => queue.addAndWait(n, { timeoutMs: 10_000 })));
    expect(results.map((r) => r.result)).toEqual([21, 24, 27]);
    const { id } = await queue.add(10);
    await expect(queue.waitFor(id, { timeoutMs: 10_000 })).resolves.toBe(30);
    expect(pages).toBe(1);
  });

  it('a closed transport parks no read: the reader a finished waitFor leaves lingering ends with it', async () => {
    const { transport, name } = namedTransport();
    const queue = new Queue<number>(transport, queueName());
    closing.push(async () => void (await redis.raw.del(...(await redis.raw.keys(`emq:{${queue.name}}:*`)), 'none')));
    const { id } = await queue.add(1);
    const waiting = queue.waitFor(id, { timeoutMs: 10_000 });
    await until(async () => (await parkedReads(name)) === 1);
    consume(queue, () => 'done');
    await expect(waiting).resolves.toBe('done');
    // the reader lingers (a next waitFor would reuse its connection) until the transport closes
    expect(await parkedReads(name)).toBe(1);
    await transport.close();
    // a read parked again on a new connection after the close would hold the process alive
    await sleep(300);
    expect(await parkedReads(name)).toBe(0);
    await expect(queue.waitFor(id, { timeoutMs: 1_000 })).rejects.toThrow();
  });

  it('a subscriber that falls far behind catches up with readEvents and loses nothing; a timed-out waiter leaves nothing parked', async () => {
    const { transport, name } = namedTransport();
    const queue = new Queue<number>(transport, queueName());
    closing.push(async () => void (await redis.raw.del(...(await redis.raw.keys(`emq:{${queue.name}}:*`)), 'none')));
    const stop = new AbortController();
    const iterator = queue.events({ after: '0', signal: stop.signal })[Symbol.asyncIterator]();
    const first = iterator.next();
    await queue.add(-1);
    expect((await first).value).toMatchObject({ event: 'added' });
    await until(async () => (await parkedReads(name)) === 1);
    // 1,500 entries while it takes none: past what it may hold, so it is dropped back to reading pages
    for (let i = 0; i < 1_500; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => queue.add(i + j)));
    const got: QueueEvent[] = [];
    while (got.length < 1_500) got.push((await iterator.next()).value as QueueEvent);
    const raw = await redis.raw.xrange(keysOf(queue).key('events'), '-', '+');
    expect(got).toEqual(raw.slice(1).flatMap(([id, fields]) => decodeEntry(id, fields).events));
    stop.abort();
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    await until(async () => (await parkedReads(name)) === 0);

    const { id } = await queue.add(0);
    await expect(queue.waitFor(id, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'EMQTIMEOUT' });
    await until(async () => (await parkedReads(name)) === 0);
  });
});
