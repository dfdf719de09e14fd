import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Redis as Upstash } from '@upstash/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { UpstashTransport } from '../../src/edge/index.js';
import type { ScriptSource } from '../../src/generated/scripts.js';
import { startBridge, type BridgeStats, type RunningBridge } from '../../src/node/bridge/index.js';
import { runScripts } from '../../src/ops/run-scripts.js';
import { queueName } from '../helpers.js';

const TOKEN = 'bridge-test-token';

/** A bridge of this file's own over the run's Redis, so its counters see only this file. */
describe('the Upstash REST bridge', () => {
  const raw = new Redis(inject('redisUrl'), { protocol: 2 });
  let bridge: RunningBridge;
  /** The client as the edge builds it: base64 replies (its default), strings left as sent. */
  let client: Upstash;
  const written: string[] = [];
  /** A random key, deleted after the file. */
  const key = (label = 'k'): string => {
    const name = `bridge-test:${queueName(label)}`;
    written.push(name);
    return name;
  };

  /** POSTs `body` (JSON) to `path` as a client would, with the token unless told otherwise. */
  async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
    const res = await fetch(`${bridge.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  }
  const base64 = { 'Upstash-Encoding': 'base64' };
  const b64 = (text: string): string => Buffer.from(text).toString('base64');

  /** The counters' growth while `act` runs. */
  async function counted(act: () => Promise<unknown>): Promise<BridgeStats> {
    const before = bridge.stats();
    await act();
    const after = bridge.stats();
    return {
      requests: after.requests - before.requests,
      commands: after.commands - before.commands,
      unauthorized: after.unauthorized - before.unauthorized,
    };
  }

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl: inject('redisUrl'), token: TOKEN });
    client = new Upstash({ url: bridge.url, token: TOKEN, automaticDeserialization: false, enableAutoPipelining: false, retry: false });
  });
  afterAll(async () => {
    if (written.length > 0) await raw.del(...written);
    raw.disconnect();
    await bridge.close();
  });

  describe('commands through @upstash/redis', () => {
    it('runs strings, counters, hashes and sorted sets as Redis answers them', async () => {
      const k = key();
      expect(await client.set(k, 'héllo wörld ✓')).toBe('OK');
      expect(await client.get(k)).toBe('héllo wörld ✓');
      expect(await raw.get(k)).toBe('héllo wörld ✓');
      expect(await client.get(key('missing'))).toBeNull();
      const n = key('n');
      expect(await client.incr(n)).toBe(1);
      expect(await client.incrby(n, 41)).toBe(42);
      // strings that look like JSON stay strings: automaticDeserialization is off end to end
      expect(await client.set(k, '{"a":1}')).toBe('OK');
      expect(await client.get(k)).toBe('{"a":1}');
      expect(await client.set(k, '123')).toBe('OK');
      expect(await client.get(k)).toBe('123');
      // HGETALL comes back as Redis's flat array (RESP2), not reshaped by ioredis on the way
      const h = key('h');
      await client.hset(h, { a: '1', b: 'two' });
      expect(await client.hgetall(h)).toEqual(['a', '1', 'b', 'two']);
      const z = key('z');
      await client.zadd(z, { score: 2, member: 'b' }, { score: 1, member: 'a' });
      expect(await client.zrange(z, 0, -1, { withScores: true })).toEqual(['a', '1', 'b', '2']);
      expect(await client.ping()).toBe('PONG');
    });

    it('runs a pipeline in one request, each command with its own result or error', async () => {
      const k = key();
      const stats = await counted(async () => {
        const replies = await client.pipeline().set(k, 'text').incr(k).get(k).exec({ keepErrors: true });
        expect(replies).toEqual([
          { result: 'OK', error: undefined },
          { result: undefined, error: 'ERR value is not an integer or out of range' },
          { result: 'text', error: undefined },
        ]);
      });
      expect(stats).toEqual({ requests: 1, commands: 3, unauthorized: 0 });
    });

    it('runs multi-exec as a transaction; a malformed command discards it whole', async () => {
      const k = key();
      const results = await client.multi().set(k, '1').incr(k).get(k).exec();
      expect(results).toEqual(['OK', 2, '2']);
      // a command Redis refuses to queue: EXECABORT, 400, and nothing written
      const other = key();
      const aborted = await post('/multi-exec', [['SET', other, 'x'], ['NOSUCHCOMMAND']]);
      expect(aborted.status).toBe(400);
      expect(aborted.json).toEqual({ error: expect.stringMatching(/^EXECABORT/) });
      expect(await raw.exists(other)).toBe(0);
      // a runtime error inside is that command's own: the others ran, as in Redis
      const ran = await post('/multi-exec', [['SET', other, 'x'], ['INCR', other], ['GET', other]]);
      expect(ran).toEqual({
        status: 200,
        json: [{ result: 'OK' }, { error: 'ERR value is not an integer or out of range' }, { result: 'x' }],
      });
    });

    // both found by @upstash/redis's own suite (tools/upstash-suite): pipeline, auto-pipeline, read-your-writes
    it('answers a null in a pipeline as a result, not an error; a script returning nil included', async () => {
      const k = key();
      const none = key('none');
      expect(await post('/pipeline', [['GET', none], ['SET', k, 'v'], ['EVAL', 'return nil', 0], ['GET', k]], base64)).toEqual({
        status: 200,
        json: [{ result: null }, { result: 'OK' }, { result: null }, { result: b64('v') }],
      });
      expect(await client.pipeline().get(none).hget(none, 'f').get(k).exec()).toEqual([null, null, 'v']);
      const transport = UpstashTransport.connect({ url: bridge.url, token: TOKEN, retry: false });
      const nil: ScriptSource = { name: 'nil', lua: 'return nil', sha1: '' };
      expect(await transport.eval([{ script: nil, keys: [], args: [] }])).toEqual([null]);
    });

    it('sends a new Upstash-Sync-Token with every answer, which the client keeps for read-your-writes', async () => {
      const tokenOf = async (path: string, body: unknown): Promise<string | null> =>
        (await fetch(`${bridge.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(body) })).headers.get('upstash-sync-token');
      const tokens = [await tokenOf('/', ['PING']), await tokenOf('/pipeline', [['PING']]), await tokenOf('/multi-exec', [['PING']])];
      expect(tokens.every((t) => typeof t === 'string' && t !== '')).toBe(true);
      expect(new Set(tokens).size).toBe(3);
      const ryw = new Upstash({ url: bridge.url, token: TOKEN, automaticDeserialization: false, enableAutoPipelining: false, retry: false });
      expect(ryw.readYourWritesSyncToken).toBe('');
      await ryw.set(key(), 'x');
      const first = ryw.readYourWritesSyncToken;
      expect(first).not.toBe('');
      await ryw.get(key());
      expect(ryw.readYourWritesSyncToken).not.toBe(first);
    });
  });

  describe('replies', () => {
    it('with Upstash-Encoding: base64, encodes every string but a bare OK; integers and nulls as they are', async () => {
      const k = key();
      expect(await post('/', ['SET', k, 'bar'], base64)).toEqual({ status: 200, json: { result: 'OK' } });
      expect(await post('/', ['GET', k], base64)).toEqual({ status: 200, json: { result: b64('bar') } });
      expect(await post('/', ['GET', key('none')], base64)).toEqual({ status: 200, json: { result: null } });
      expect(await post('/', ['STRLEN', k], base64)).toEqual({ status: 200, json: { result: 3 } });
      expect(await post('/', ['PING'], base64)).toEqual({ status: 200, json: { result: b64('PONG') } });
      // a value that happens to read "OK" decodes the same either way
      await raw.set(k, 'OK');
      expect(await post('/', ['GET', k], base64)).toEqual({ status: 200, json: { result: 'OK' } });
      // nested arrays: strings encoded at every depth, "OK" included (the client decodes every
      // string of a top-level array), numbers and nulls untouched
      const lua = "return {'a', 7, false, {'OK', 'b', {'deep', 3}}, redis.status_reply('OK')}";
      expect(await post('/', ['EVAL', lua, 0], base64)).toEqual({
        status: 200,
        json: { result: [b64('a'), 7, null, [b64('OK'), b64('b'), [b64('deep'), 3]], b64('OK')] },
      });
      // the same without the header: plain strings
      expect(await post('/', ['EVAL', lua, 0])).toEqual({
        status: 200,
        json: { result: ['a', 7, null, ['OK', 'b', ['deep', 3]], 'OK'] },
      });
      // pipeline entries are top-level results each
      expect(await post('/pipeline', [['SET', k, 'v'], ['GET', k], ['EXISTS', k]], base64)).toEqual({
        status: 200,
        json: [{ result: 'OK' }, { result: b64('v') }, { result: 1 }],
      });
    });

    it('carries bytes exactly in base64, which plain JSON cannot', async () => {
      const k = key();
      await raw.set(k, Buffer.from([0xff, 0x00, 0xfe, 0x41]));
      expect(await post('/', ['GET', k], base64)).toEqual({ status: 200, json: { result: '/wD+QQ==' } });
      expect((await post('/', ['GET', k])).json).toEqual({ result: '\uFFFD\u0000\uFFFDA' });
    });

    it('decodes in the client to what Redis holds, nested arrays and "OK" included', async () => {
      const lua = "return {'a', 7, false, {'OK', 'é', {'deep', 3}}, redis.status_reply('OK')}";
      expect(await client.eval(lua, [], [])).toEqual(['a', 7, null, ['OK', 'é', ['deep', 3]], 'OK']);
    });

    it('answers a command error with 400 and {error}; the client throws Redis text', async () => {
      const k = key();
      await raw.set(k, 'text');
      expect(await post('/', ['INCR', k])).toEqual({ status: 400, json: { error: 'ERR value is not an integer or out of range' } });
      await expect(client.incr(k)).rejects.toThrow(/^ERR value is not an integer or out of range/);
      expect(await post('/', ['NOSUCHCOMMAND', 'x'])).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^ERR unknown command/) } });
      // requests that are not a command at all
      expect(await post('/', 'not json')).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^ERR/) } });
      expect(await post('/', [])).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^ERR/) } });
      expect(await post('/', [['GET', k]])).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^ERR/) } });
      expect(await post('/pipeline', { commands: [] })).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^ERR/) } });
      expect(await post('/nowhere', ['PING'])).toMatchObject({ status: 404 });
    });
  });

  describe('auth', () => {
    it('answers 401 to a missing or wrong token, and runs nothing', async () => {
      const k = key();
      const stats = await counted(async () => {
        expect(await post('/', ['SET', k, 'x'], { authorization: '' })).toEqual({ status: 401, json: { error: 'Unauthorized' } });
        expect(await post('/', ['SET', k, 'x'], { authorization: `Bearer ${TOKEN}x` })).toMatchObject({ status: 401 });
        expect(await post('/', ['SET', k, 'x'], { authorization: `Bearer ${TOKEN.slice(0, -1)}` })).toMatchObject({ status: 401 });
        expect(await post('/', ['SET', k, 'x'], { authorization: TOKEN })).toMatchObject({ status: 401 });
        expect(await post('/pipeline', [['SET', k, 'x']], { authorization: 'Bearer nope' })).toMatchObject({ status: 401 });
        expect(await post('/multi-exec', [['SET', k, 'x']], { authorization: 'Bearer nope' })).toMatchObject({ status: 401 });
      });
      expect(stats).toEqual({ requests: 6, commands: 0, unauthorized: 6 });
      expect(await raw.exists(k)).toBe(0);
      const stranger = new Upstash({ url: bridge.url, token: 'wrong', automaticDeserialization: false, enableAutoPipelining: false, retry: false });
      await expect(stranger.set(k, 'x')).rejects.toThrow(/Unauthorized/);
      expect(await raw.exists(k)).toBe(0);
    });

    it('also takes the token as the _token query parameter, as Upstash does', async () => {
      const res = await fetch(`${bridge.url}/?_token=${TOKEN}`, { method: 'POST', body: '["PING"]' });
      expect(await res.json()).toEqual({ result: 'PONG' });
    });
  });

  describe('scripts', () => {
    /** A script no Redis has seen: a fresh source, so its sha is unknown until the first EVAL. */
    const freshScript = (): ScriptSource => {
      const lua = `-- ${queueName('fresh')}\nreturn {KEYS[1], ARGV[1], tonumber(ARGV[2]) + 1}`;
      return { name: 'fresh', lua, sha1: createHash('sha1').update(lua).digest('hex') };
    };

    it('answers EVALSHA of an unknown sha with the NOSCRIPT text, so clients fall back to EVAL', async () => {
      const sha = freshScript().sha1;
      const single = await post('/', ['EVALSHA', sha, 0]);
      expect(single).toEqual({ status: 400, json: { error: 'NOSCRIPT No matching script. Please use EVAL.' } });
      expect(await post('/pipeline', [['EVALSHA', sha, 0], ['PING']])).toEqual({
        status: 200,
        json: [{ error: 'NOSCRIPT No matching script. Please use EVAL.' }, { result: 'PONG' }],
      });
      await expect(client.evalsha(sha, [], [])).rejects.toThrow(/^NOSCRIPT/);
    });

    it('UpstashTransport: one /pipeline request for several calls, NOSCRIPT as an Error, EVAL fallback in one more', async () => {
      const transport = UpstashTransport.connect({ url: bridge.url, token: TOKEN, retry: false });
      const script = freshScript();
      const call = (n: number) => ({ script, keys: ['k'], args: ['v', n] });
      const stats = await counted(async () => {
        const first = await transport.evalsha([call(1), call(2)]);
        expect(first).toHaveLength(2);
        for (const reply of first) {
          expect(reply).toBeInstanceOf(Error);
          expect((reply as Error).message).toBe('NOSCRIPT No matching script. Please use EVAL.');
        }
      });
      expect(stats).toEqual({ requests: 1, commands: 2, unauthorized: 0 });
      // the core's runScripts on a fresh script: EVALSHA answers NOSCRIPT, EVAL in one more request
      expect(await counted(async () => expect(await runScripts(transport, [call(1)])).toEqual([['k', 'v', 2]]))).toEqual({
        requests: 2,
        commands: 2,
        unauthorized: 0,
      });
      // cached by that EVAL: several calls by sha, one request
      expect(await counted(async () => expect(await runScripts(transport, [call(2), call(3), call(4)])).toEqual([
        ['k', 'v', 3],
        ['k', 'v', 4],
        ['k', 'v', 5],
      ]))).toEqual({ requests: 1, commands: 3, unauthorized: 0 });
      // a script's own error stays its text, beside a call that worked
      const failing: ScriptSource = { name: 'failing', lua: "return redis.error_reply('EMQARG n must be >= 0')", sha1: '' };
      const mixed = await transport.eval([{ script: failing, keys: [], args: [] }, call(7)]);
      expect(mixed[0]).toBeInstanceOf(Error);
      expect((mixed[0] as Error).message).toBe('EMQARG n must be >= 0');
      expect(mixed[1]).toEqual(['k', 'v', 8]);
      await transport.ping();
      await transport.close();
    });

    it('UpstashTransport refuses a client that would JSON-parse replies, and says which variables fromEnv misses', () => {
      const parsing = new Upstash({ url: bridge.url, token: TOKEN });
      expect(() => new UpstashTransport(parsing)).toThrow(/automaticDeserialization: false/);
      expect(() => UpstashTransport.fromEnv({})).toThrow(/UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/);
      expect(() => UpstashTransport.fromEnv({ UPSTASH_REDIS_REST_URL: bridge.url })).toThrow(/: UPSTASH_REDIS_REST_TOKEN not set/);
      expect(UpstashTransport.fromEnv({ UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: TOKEN })).toBeInstanceOf(UpstashTransport);
    });
  });

  describe('commands an HTTP request cannot carry', () => {
    const refusedText = (name: string): RegExp => new RegExp(`^ERR Command is not available: '${name}'`);

    it.each([
      ['BLPOP', ['BLPOP', 'bridge-test:list', 0]],
      ['BRPOP', ['BRPOP', 'bridge-test:list', 0]],
      ['BLMOVE', ['BLMOVE', 'bridge-test:a', 'bridge-test:b', 'LEFT', 'RIGHT', 0]],
      ['BRPOPLPUSH', ['BRPOPLPUSH', 'bridge-test:a', 'bridge-test:b', 0]],
      ['BLMPOP', ['BLMPOP', 0, 1, 'bridge-test:a', 'LEFT']],
      ['BZPOPMIN', ['BZPOPMIN', 'bridge-test:z', 0]],
      ['BZPOPMAX', ['BZPOPMAX', 'bridge-test:z', 0]],
      ['BZMPOP', ['BZMPOP', 0, 1, 'bridge-test:z', 'MIN']],
      ['XREAD BLOCK', ['XREAD', 'BLOCK', 0, 'STREAMS', 'bridge-test:s', '$']],
      ['XREADGROUP BLOCK', ['XREADGROUP', 'GROUP', 'g', 'c', 'block', 0, 'STREAMS', 'bridge-test:s', '>']],
      ['SUBSCRIBE', ['SUBSCRIBE', 'bridge-test:ch']],
      ['PSUBSCRIBE', ['PSUBSCRIBE', 'bridge-test:*']],
      ['MONITOR', ['MONITOR']],
      ['WAIT', ['WAIT', 1, 0]],
      ['MULTI', ['MULTI']],
      ['WATCH', ['WATCH', 'bridge-test:a']],
      ['SELECT', ['SELECT', 1]],
      ['CLIENT', ['CLIENT', 'PAUSE', 100000]],
    ])('%s: refused at once with 400, never sent to Redis', async (name, command) => {
      // each of these would block for ever (timeout 0) or take the shared connection over
      const started = Date.now();
      const stats = await counted(async () => {
        const reply = await post('/', command);
        expect(reply.status).toBe(400);
        expect((reply.json as { error: string }).error).toMatch(refusedText(name));
      });
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(stats).toEqual({ requests: 1, commands: 0, unauthorized: 0 });
    });

    it('in a pipeline the refused command errors alone; a transaction holding one is refused whole', async () => {
      const k = key();
      expect(await post('/pipeline', [['SET', k, 'x'], ['BLPOP', k, 0], ['GET', k]])).toEqual({
        status: 200,
        json: [{ result: 'OK' }, { error: expect.stringMatching(refusedText('BLPOP')) }, { result: 'x' }],
      });
      const other = key();
      const multi = await post('/multi-exec', [['SET', other, 'x'], ['BRPOP', other, 0]]);
      expect(multi).toEqual({ status: 400, json: { error: expect.stringMatching(refusedText('BRPOP')) } });
      expect(await raw.exists(other)).toBe(0);
      // the streaming endpoints of the real API are refused in the same words
      expect(await post('/subscribe/chat', [])).toMatchObject({ status: 400, json: { error: expect.stringMatching(refusedText('SUBSCRIBE')) } });
      expect(await post('/monitor', [])).toMatchObject({ status: 400, json: { error: expect.stringMatching(refusedText('MONITOR')) } });
    });

    it('serves the non-blocking forms: XREAD without BLOCK, LPOP', async () => {
      const s = key('s');
      await raw.xadd(s, '1-1', 'f', 'v');
      expect(await post('/', ['XREAD', 'COUNT', 1, 'STREAMS', s, '0'])).toEqual({
        status: 200,
        json: { result: [[s, [['1-1', ['f', 'v']]]]] },
      });
      // a stream named "block" is a key, not the option
      expect(await post('/', ['XREAD', 'STREAMS', 'block', '0'])).toEqual({ status: 200, json: { result: null } });
      expect(await post('/', ['LPOP', key('empty')])).toEqual({ status: 200, json: { result: null } });
    });
  });

  it('counts requests and commands, and resets', async () => {
    const k = key();
    expect(await counted(() => client.set(k, '1'))).toEqual({ requests: 1, commands: 1, unauthorized: 0 });
    expect(await counted(() => client.pipeline().incr(k).incr(k).get(k).exec())).toEqual({ requests: 1, commands: 3, unauthorized: 0 });
    expect(await counted(() => client.multi().incr(k).get(k).exec())).toEqual({ requests: 1, commands: 2, unauthorized: 0 });
    bridge.reset();
    expect(bridge.stats()).toEqual({ requests: 0, commands: 0, unauthorized: 0 });
    await client.get(k);
    expect(bridge.stats()).toEqual({ requests: 1, commands: 1, unauthorized: 0 });
  });
});

describe('emq bridge', () => {
  const cli = join(import.meta.dirname, '..', '..', 'src', 'node', 'cli', 'bin.ts');
  const run = (args: string[], env: Record<string, string | undefined>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'bridge', ...args], {
      env: { ...process.env, REDIS_URL: inject('redisUrl'), UPSTASH_REDIS_REST_TOKEN: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const url = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => {
        const line = /^(http:\/\/\S+)\n/.exec(stdout);
        if (line) resolve(line[1]!);
      });
      void exited.then(() => reject(new Error(`exited before printing its URL: ${stderr}`)));
    });
    url.catch(() => {}); // a run that is meant to fail never prints one

    return { child, exited, url, output: () => ({ stdout, stderr }) };
  };

  it('needs UPSTASH_REDIS_REST_TOKEN: a usage error, exit 2', async () => {
    const bridge = run([], {});
    expect(await bridge.exited).toBe(2);
    expect(bridge.output().stderr).toMatch(/UPSTASH_REDIS_REST_TOKEN/);
    expect(bridge.output().stdout).toBe('');
  });

  it('prints its URL, serves the token holder, and stops on SIGTERM', async () => {
    const bridge = run(['--port', '0'], { UPSTASH_REDIS_REST_TOKEN: 'cli-token' });
    try {
      const url = await bridge.url;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const client = new Upstash({ url, token: 'cli-token', automaticDeserialization: false, enableAutoPipelining: false, retry: false });
      expect(await client.ping()).toBe('PONG');
      const stranger = await fetch(url, { method: 'POST', body: '["PING"]', headers: { authorization: 'Bearer other' } });
      expect(stranger.status).toBe(401);
    } finally {
      bridge.child.kill('SIGTERM');
    }
    expect(await bridge.exited).toBe(0);
  });
});
