import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { RateLimit } from '../src/index.js';

/**
 * Rate-limit checks the suites and the chaos run share: the bound itself over start times (server
 * ms), and a record of a queue's start logs that outlives their trimming.
 */

/** A window of `periodMs` that held more starts than `limit`: the window (end - periodMs, end] and its count. */
export interface OverLimit {
  readonly end: number;
  readonly count: number;
}

/**
 * Every window (t - periodMs, t], t a start time, that holds more than `limit` of `starts` (server
 * ms, any order): the bound a rate limit promises (docs/design.md, "Rate limits and holds"). A start
 * at s counts until s + periodMs, exclusive, as the scripts count it. Empty when the bound held.
 *
 * @example
 * windowsOverLimit([0, 10, 99, 100], { limit: 3, periodMs: 100 }); // [] : (0, 100] holds 10, 99, 100
 * windowsOverLimit([0, 10, 99, 100], { limit: 2, periodMs: 100 }); // [{ end: 99, count: 3 }, { end: 100, count: 3 }]
 */
export function windowsOverLimit(starts: readonly number[], { limit, periodMs }: RateLimit): OverLimit[] {
  const sorted = [...starts].sort((a, b) => a - b);
  const out: OverLimit[] = [];
  let lo = 0;
  for (let i = 0; i < sorted.length; i++) {
    const end = sorted[i]!;
    // the last start at this time closes the window: starts at one ms all count in it
    if (sorted[i + 1] === end) continue;
    while (sorted[lo]! <= end - periodMs) lo++;
    const count = i - lo + 1;
    if (count > limit) out.push({ end, count });
  }
  return out;
}

/** The most starts any window of `periodMs` held (0 for none). */
export function busiestWindow(starts: readonly number[], periodMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  let lo = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (sorted[lo]! <= sorted[i]! - periodMs) lo++;
    most = Math.max(most, i - lo + 1);
  }
  return most;
}

/**
 * The poller StartsLogCopy runs in a process of its own, so a busy test or scenario process (the
 * Worker's code, consumers, a fault proxy, all on one event loop) cannot hold its polls back past a
 * period. Plain JavaScript for `node -e`; argv: the ioredis module's path, the Redis URL, the keys
 * (JSON), the poll period in ms. Prints `ready` once connected; when its stdin ends, polls once more
 * and prints the copy as one JSON line.
 */
const POLLER = `
const Redis = require(process.argv[1]);
const [url, keysJson, everyText] = process.argv.slice(2);
const keys = JSON.parse(keysJson);
const every = Number(everyText);
const redis = new Redis(url, { maxRetriesPerRequest: 1 });
const seen = keys.map(() => new Map());
let failures = 0, longestGapMs = 0, last = 0, stopping = false, timer;
async function poll() {
  try {
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.zrange(key, '0', '-1', 'WITHSCORES');
    const replies = await pipeline.exec();
    replies.forEach(([error, flat], i) => {
      if (error) throw error;
      for (let j = 0; j + 1 < flat.length; j += 2) seen[i].set(flat[j], Number(flat[j + 1]));
    });
    const now = performance.now();
    if (last > 0) longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
  } catch {
    failures++;
  }
}
async function loop() {
  await poll();
  if (!stopping) timer = setTimeout(loop, every);
}
redis.once('ready', () => { process.stdout.write('ready\\n'); void loop(); });
process.stdin.resume();
process.stdin.on('end', async () => {
  stopping = true;
  clearTimeout(timer);
  await poll();
  process.stdout.write(JSON.stringify({ seen: seen.map((m) => [...m]), failures, longestGapMs }) + '\\n');
  redis.disconnect();
});
`;

/**
 * A copy of a queue's starts logs (`emq:{q}:starts[:<g>]`, lease token -> the claim's server ms)
 * kept by reading them every `everyMs` from a process of its own: a claim trims a log to its last
 * period and the key expires a period after its newest start, so a poll more often than the
 * shortest period sees every start (`longestGapMs` says how long the polls were apart at worst).
 * The times are the claims' own `now` (TIME, read as the claim began): an `active` event's entry
 * id is taken when its XADD runs, at the script's end, so it can trail the claim by a ms or more
 * and put two starts a period apart into one window. A run checks the copy is whole against the
 * lease tokens its handlers saw and the count of `active` events.
 *
 * @example
 * const logs = await new StartsLogCopy(redisUrl, queue.name, ['g']).start();
 * // ... run ...
 * await logs.stop();
 * windowsOverLimit(logs.times('g'), { limit: 10, periodMs: 500 });
 */
export class StartsLogCopy {
  private readonly seen = new Map<string, Map<number, number>>();
  private child: ChildProcess | undefined;
  private result: Promise<void> | undefined;
  /** Polls that failed (a Redis away): a gap in the copy is then possible. */
  failures = 0;
  /** The longest time between two polls that read (ms): over the shortest period, starts may be missing. */
  longestGapMs = 0;

  /**
   * @param entries the logs to copy: group names, or `!` for the queue's own
   */
  constructor(
    private readonly redisUrl: string,
    private readonly queue: string,
    private readonly entries: readonly string[],
    private readonly everyMs = 20,
  ) {
    for (const entry of entries) this.seen.set(entry, new Map());
  }

  /** Starts the poller; resolves once it is connected and polling. */
  async start(): Promise<this> {
    const ioredis = createRequire(import.meta.url).resolve('ioredis');
    const keys = this.entries.map((entry) => (entry === '!' ? `emq:{${this.queue}}:starts` : `emq:{${this.queue}}:starts:${entry}`));
    const child = spawn(process.execPath, ['-e', POLLER, ioredis, this.redisUrl, JSON.stringify(keys), String(this.everyMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child = child;
    let out = '';
    const ready = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.startsWith('ready\n')) resolve();
      });
    });
    this.result = new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => {
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (!line) return reject(new Error(`the starts log poller exited (${code}) without its copy`));
        const { seen, failures, longestGapMs } = JSON.parse(line) as { seen: Array<Array<[string, number]>>; failures: number; longestGapMs: number };
        seen.forEach((pairs, i) => {
          const into = this.seen.get(this.entries[i]!)!;
          for (const [token, at] of pairs) into.set(Number(token), at);
        });
        this.failures = failures;
        this.longestGapMs = longestGapMs;
        resolve();
      });
    });
    // a poller that dies early is reported by stop(), not as an unhandled rejection now
    this.result.catch(() => undefined);
    await ready;
    return this;
  }

  /** Stops the poller after one last read, and takes its copy. */
  async stop(): Promise<void> {
    if (!this.child) return;
    const child = this.child;
    this.child = undefined;
    child.stdin!.end();
    await this.result;
  }

  /** The start times of `entry` (server ms), one per start, in token order. */
  times(entry: string): number[] {
    return [...this.seen.get(entry)!.entries()].sort(([a], [b]) => a - b).map(([, at]) => at);
  }

  /** The lease tokens of `entry`'s starts, with when each started (server ms). */
  tokens(entry: string): ReadonlyMap<number, number> {
    return this.seen.get(entry)!;
  }
}
