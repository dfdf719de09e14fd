import type { Redis } from 'ioredis';
import type { QueueEvent } from '../../src/events/events.js';

const UNFINISHED = new Set(['pending', 'scheduled', 'active']);

/**
 * One look at a queue's dedupe keys and every row carrying one, in one script so it sees one
 * instant: a look in several round trips would see a key released and taken again between two
 * reads and call it two holders. KEYS inside a script: the scenario's Redis holds one queue.
 */
const SAMPLE_LUA = `
local prefix = ARGV[1]
local rows = {}
for _, k in ipairs(redis.call('KEYS', prefix .. 'job:*')) do
  local v = redis.call('HMGET', k, 's', 'dk', 'dt')
  if v[2] then rows[#rows + 1] = {string.sub(k, #prefix + 5), v[1] or '', v[2], v[3] or ''} end
end
local keys = {}
for _, k in ipairs(redis.call('KEYS', prefix .. 'dd:*')) do
  keys[#keys + 1] = {string.sub(k, #prefix + 4), redis.call('GET', k) or '', redis.call('PTTL', k)}
end
return {rows, keys}`;

/**
 * Samples a queue's dedupe keys while a run goes on (every `everyMs`, and once more with
 * `sample()`), and keeps each breach seen, by key and job, so a breach that lasts several samples
 * counts once:
 *
 * - `heldTwice`: an unfinished row holding its key until finished (`dk`, no `dt`) that its key does
 *   not name: another job holds it, or nobody does; either way a second job could take the key
 *   while this one is unfinished.
 * - `heldAfterFinish`: a key without a TTL naming a row that is completed, dead or gone.
 * - `windowsTooLong`: a key with a TTL longer than the window its row asked for (`dt`).
 */
export class DedupeSampler {
  readonly heldTwice = new Set<string>();
  readonly heldAfterFinish = new Set<string>();
  readonly windowsTooLong = new Set<string>();
  samples = 0;
  failures = 0;
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly raw: Redis,
    private readonly prefix: string,
    private readonly everyMs = 50,
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.sample().catch(() => void this.failures++);
        await new Promise((resolve) => setTimeout(resolve, this.everyMs));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** One sample now, its breaches added to the sets. */
  async sample(): Promise<void> {
    const [rows, keys] = (await this.raw.eval(SAMPLE_LUA, 0, this.prefix)) as [Array<[string, string, string, string]>, Array<[string, string, number]>];
    this.samples++;
    const named = new Map(keys.map(([key, id, pttl]) => [key, { id, pttl }]));
    const rowOf = new Map(rows.map(([id, s, dk, dt]) => [id, { s, dk, dt }]));
    for (const [id, s, dk, dt] of rows) {
      if (dt === '' && UNFINISHED.has(s) && named.get(dk)?.id !== id) this.heldTwice.add(`${dk} ${id}`);
    }
    for (const [key, { id, pttl }] of named) {
      const row = rowOf.get(id);
      if (pttl === -1 && !(row && row.dk === key && UNFINISHED.has(row.s))) this.heldAfterFinish.add(`${key} ${id}`);
      if (pttl > 0 && row && row.dk === key && row.dt !== '' && pttl > Number(row.dt)) this.windowsTooLong.add(`${key} ${id}`);
    }
  }
}

/**
 * Jobs created (`added`, `scheduled`) while another job of their key was unfinished, read from
 * the events stream (each event appended by the script that made the change, so the stream's
 * order is the order of the changes), for the keys `untilFinished` says every add held until its
 * job finished. `keyOf` names each job's key (from its payload).
 */
export function createdWhileHeld(events: readonly QueueEvent[], keyOf: (id: string) => string | undefined, untilFinished: (key: string) => boolean): Set<string> {
  const open = new Map<string, Set<string>>();
  const out = new Set<string>();
  for (const e of events) {
    if (!('jobId' in e)) continue;
    const key = keyOf(e.jobId);
    if (key === undefined || !untilFinished(key)) continue;
    const unfinished = open.get(key) ?? new Set<string>();
    open.set(key, unfinished);
    if (e.event === 'added' || e.event === 'scheduled') {
      if ([...unfinished].some((other) => other !== e.jobId)) out.add(`${key} ${e.jobId}`);
      unfinished.add(e.jobId);
    } else if (e.event === 'completed' || e.event === 'dead') unfinished.delete(e.jobId);
  }
  return out;
}

/** Jobs with a `replaced` event after an `active` one: a replace of a job already started. */
export function replacedAfterStart(events: readonly QueueEvent[]): Set<string> {
  const started = new Set<string>();
  const out = new Set<string>();
  for (const e of events) {
    if (e.event === 'active') started.add(e.jobId);
    else if (e.event === 'replaced' && started.has(e.jobId)) out.add(e.jobId);
  }
  return out;
}
