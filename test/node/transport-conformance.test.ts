import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { UpstashTransport } from '../../src/edge/index.js';
import { scripts } from '../../src/generated/scripts.js';
import { EmqError, Flows, listQueues, Queue, type Held, type Job, type Reply, type ScriptCall, type Transport } from '../../src/index.js';
import { startBridge, type RunningBridge } from '../../src/node/bridge/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { leases, queueName, scriptsOf, sleep } from '../helpers.js';
import { claimOp } from '../../src/ops/claim.js';
import { completeOp } from '../../src/ops/complete.js';
import { listGroupsOp } from '../../src/ops/list-groups.js';
import { readEventsOp } from '../../src/ops/read-events.js';
import { stepOp } from '../../src/ops/step.js';
import { suspendOp } from '../../src/ops/suspend.js';
import { watchJobOp } from '../../src/ops/watch-job.js';

/** One script call as it finally answered (after any EVAL fallback). */
interface Answer {
  script: string;
  reply: Reply | { error: string };
}

/**
 * Passes calls through to a real transport and writes down what each call finally answered. A
 * NOSCRIPT answer is a slot the EVAL fallback fills in, so another suite's SCRIPT FLUSH cannot
 * make the two logs differ.
 */
class Recorder implements Transport {
  readonly answers: Answer[] = [];
  private readonly retrying = new Map<ScriptCall, Answer>();

  constructor(private readonly inner: Transport) {}

  async evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    const results = await this.inner.evalsha(calls);
    calls.forEach((call, i) => {
      const answer = this.note(call, results[i]!);
      if (results[i] instanceof Error && results[i].message.startsWith('NOSCRIPT')) this.retrying.set(call, answer);
    });
    return results;
  }

  async eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    const results = await this.inner.eval(calls);
    calls.forEach((call, i) => {
      const slot = this.retrying.get(call);
      this.retrying.delete(call);
      if (slot) slot.reply = reply(results[i]!);
      else this.note(call, results[i]!);
    });
    return results;
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private note(call: ScriptCall, result: Reply | Error): Answer {
    const answer = { script: call.script.name, reply: reply(result) };
    this.answers.push(answer);
    return answer;
  }
}

const reply = (result: Reply | Error): Answer['reply'] => (result instanceof Error ? { error: result.message } : result);

/**
 * Makes two runs comparable: server times (epoch ms, as numbers or as row text, and the events
 * stream's entry ids, `<ms>-<seq>`) become "T" and the queue's own name "Q"; everything else must
 * match exactly, types included.
 */
function normalize(value: unknown, name: string): unknown {
  // a time in ms, or a minute (the last hour's buckets: floor(ms / 60000), 8 digits, and the
  // `c<minute>` / `d<minute>` fields), which differs when the two runs straddle a minute's turn
  if (typeof value === 'number') return value > 1e12 ? 'T' : value >= 1e7 && value < 1e9 ? 'M' : value;
  // (a fired job's id carries its slot: `JOB:<scheduler>@<ms>`; a claimed job, one string of
  // fields joined by spaces, its created time: lua/includes/claimed_job.lua)
  if (typeof value === 'string') {
    if (/^\d{13}(-\d+)?$/.test(value)) return 'T';
    if (/^[cd]?\d{8}$/.test(value)) return `${value.replace(/\d+/, '')}M`;
    // (a step's record, JSON in a string: its times `"st":<ms>`)
    return value.replace(/@\d{13}/g, '@T').replace(/ \d{13} /g, ' T ').replace(/":\d{13}/g, '":T').split(name).join('Q');
  }
  if (value instanceof EmqError) return { error: value.name, code: value.code, message: normalize(value.message, name) };
  if (value instanceof Error) return { error: value.name, message: normalize(value.message, name) };
  if (Array.isArray(value)) return mergeMinutes(value.map((v) => normalize(v, name)));
  if (value && typeof value === 'object') {
    // a typed last hour (`lastHour`: 60 counts a kind, the last the current minute): its totals,
    // which a run that straddles a minute's turn spreads over one bucket more
    if ('minute' in value && 'completed' in value && 'dead' in value && Array.isArray(value.completed) && Array.isArray(value.dead)) {
      const total = (counts: unknown[]): number => counts.reduce((sum: number, c) => sum + Number(c), 0);
      return { minute: 'T', completed: total(value.completed), dead: total(value.dead), buckets: [value.completed.length, value.dead.length] };
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, name)]));
  }
  return value;
}

/**
 * The last hour's buckets read flat (`cM`, count, `dM`, count, ...: a minute's completions and
 * burials, once normalized) with each kind's counts added up: a run that straddles a minute's turn
 * writes its counts into two buckets, the other run into one, for the same totals. Any other array
 * is left as it is.
 */
function mergeMinutes(flat: unknown[]): unknown[] {
  const isBuckets = flat.length > 0 && flat.length % 2 === 0 && flat.every((v, i) => (i % 2 === 0 ? v === 'cM' || v === 'dM' : typeof v === 'string' && /^\d+$/.test(v)));
  if (!isBuckets) return flat;
  const totals = new Map<string, number>();
  for (let i = 0; i < flat.length; i += 2) totals.set(flat[i] as string, (totals.get(flat[i] as string) ?? 0) + Number(flat[i + 1]));
  return [...totals].sort(([a], [b]) => a.localeCompare(b)).flatMap(([kind, count]) => [kind, String(count)]);
}

const held = (jobs: ReadonlyArray<Job<unknown>>): Held[] => jobs.map(({ id, token }) => ({ id, token }));

/**
 * A scenario that takes every script through its replies: all job states, groups (one named
 * "OK", which the base64 encoding must leave intact inside nested arrays), limits, pauses,
 * fencing, reaping, promotion and the typed errors. Returns each step's typed result or error.
 */
/** The delay of the scenario's one delayed job (ms): past the steps before the short-lease claim on a loaded machine. */
const DELAY_MS = 3_000;

async function scenario(transport: Transport, queue: Queue<unknown>): Promise<Array<[string, unknown]>> {
  const steps: Array<[string, unknown]> = [];
  const step = async <T>(label: string, act: () => Promise<T>): Promise<T | undefined> => {
    try {
      const result = await act();
      steps.push([label, result]);
      return result;
    } catch (error) {
      steps.push([label, error]);
      return undefined;
    }
  };

  await step('add', () => queue.add({ text: 'héllo ✓ 🚀', nested: { list: [1, null, 'OK', '"q"'] } }));
  await step('add to group OK', () => queue.add('OK', { id: 'OK', group: 'OK' }));
  // the delayed job falls due only after the claims below: on a loaded machine the scenario up to
  // the short-lease claim took over 500 ms through the bridge, and a job due by then was claimed
  // early on one transport and not the other
  const delayedDueAt = Date.now() + DELAY_MS;
  await step('add bulk', () =>
    queue.addBulk([
      { payload: 1, group: 'g-1' },
      { payload: 2, group: 'g-1', priority: 5 },
      { payload: 3, delayMs: DELAY_MS },
      { payload: { n: 4 }, maxAttempts: 1 },
    ]),
  );
  await step('add a duplicate', () => queue.add('again', { id: 'OK' }));
  await step('upsert a scheduler', () => queue.upsertScheduler('tick', { every: 60_000, limit: 5 }, { payload: { n: 'OK' }, group: 'OK' }));
  await step('upsert it again', () => queue.upsertScheduler('tick', { every: 60_000, limit: 5 }, { payload: { n: 'OK' }, group: 'OK', priority: 2 }));
  await step('get the scheduler', () => queue.getScheduler('tick'));
  await step('a bad spec', () => queue.upsertScheduler('bad', { cron: '* * *' }, { payload: 1 }));
  await step('stats', () => queue.stats());
  await step('get a job', () => queue.getJob('OK'));
  await step('get no job', () => queue.getJob('nope'));
  await step('limit g-1 to 1', () => queue.setGroupLimit('g-1', 1));
  await step('rate-limit g-1', () => queue.setGroupRateLimit('g-1', { limit: 5, periodMs: 60_000 }));
  await step('rate-limit the queue', () => queue.setRateLimit({ limit: 100, periodMs: 60_000 }));
  await step('hold group g-9', () => queue.holdGroup('g-9', 60_000));
  await step('a bad rate limit', () => queue.setRateLimit({ limit: 0, periodMs: 1 }));
  await step('pause group OK', () => queue.pauseGroup('OK'));
  const first = await step('claim', () => leases(queue).claim(10, 30_000));
  await step('resume group OK', () => queue.resumeGroup('OK'));
  const hand = held(first?.jobs ?? []);
  await step('extend', () => leases(queue).extend(hand, 60_000));
  await step('progress', () => leases(queue).progress(hand.slice(0, 2), { step: 'héllo ✓', done: 0.5 }));
  const result = JSON.stringify({ text: 'résultat ✓ 🚀', list: [1, null, 'OK'] });
  await step('complete one with a result, claim two', () =>
    leases(queue).complete(hand.slice(0, 1).map((h) => ({ ...h, result })), { claimN: 2, leaseMs: 30_000 }),
  );
  await step('complete it again: a repeat', () => leases(queue).complete(hand.slice(0, 1)));
  await step('get the completed job, its result and progress', () => queue.getJob(hand[0]?.id ?? 'none'));
  await step('retry one', () => leases(queue).retry([{ ...hand[1]!, error: 'boom' }]));
  await sleep(5); // two jobs dead in the same ms would list in either order
  await step('fail one', () => leases(queue).fail([{ ...hand[2]!, error: 'for good' }]));
  await step('list dead', () => queue.listDead());
  await step('reprocess', () => queue.reprocess(hand[2]!.id));
  await step('reprocess a live job', () => queue.reprocess(hand[2]!.id));
  await step('move to g-1', () => queue.moveToGroup(hand[2]!.id, 'g-1'));
  await step('move back out', () => queue.moveToGroup(hand[2]!.id, null));
  await step('remove', () => queue.remove(hand[2]!.id));
  await step('remove again', () => queue.remove(hand[2]!.id));
  // job controls: a cancel of a running job and of a waiting one, twice; concurrency keys; an expiry
  await step('cancel a running job', () => queue.cancel(hand[3]?.id ?? 'none', { reason: 'héllo ✓' }));
  await step('cancel it again', () => queue.cancel(hand[3]?.id ?? 'none'));
  await step('add one with keys and an expiry', () => queue.add('keyed', { id: 'keyed', keys: ['org:7', 'plan:free'], expireAfterMs: 60_000 }));
  await step('limit a key', () => queue.setKeyLimit('org:7', 0));
  await step('rate a key', () => queue.setKeyRateLimit('plan:free', { limit: 5, periodMs: 60_000 }));
  await step('cancel the keyed job', () => queue.cancel('keyed'));
  await step('the keys', () => queue.keyLimits());
  await step('pause', () => queue.pause());
  await step('claim while paused', () => leases(queue).claim(5, 30_000));
  await step('resume', () => queue.resume());
  const short = await step('claim on a short lease', () => leases(queue).claim(10, 50));
  // the short leases lapse and the delayed job falls due (not before)
  await sleep(Math.max(600, delayedDueAt + 100 - Date.now()));
  await step('reap', () => leases(queue).reap());
  await step('promote', () => leases(queue).promote());
  const beat = await step('beat', () => leases(queue).beat({ n: 10, leaseMs: 30_000 }));
  await step('the scheduler after the beat fired it', () => queue.listSchedulers());
  await step('release', () => leases(queue).release(held(beat?.jobs ?? []).slice(0, 1)));
  await step('release a lost lease', () => leases(queue).release(held(short?.jobs ?? [])));
  await step('sweep g-1', () => queue.sweepGroup('g-1'));
  await step('lift the limit', () => queue.setGroupLimit('g-1', null));
  await step('the rate limits', () => queue.rateLimits());
  await step('the groups', () => queue.groups());
  await step('the groups of a prefix, a page of one', () => queue.groups({ prefix: 'g-', limit: 1 }));
  await step('list groups past a bad cursor', () => scriptsOf(queue).run(listGroupsOp('x', 1, '')));
  await step('lift the rate limits', () => Promise.all([queue.setGroupRateLimit('g-1', null), queue.setRateLimit(null)]));
  // admin in bulk
  for (const state of ['pending', 'scheduled', 'active', 'completed', 'dead'] as const) {
    await step(`jobs ${state}`, () => queue.getJobs(state, { limit: 10 }));
  }
  const waiting = await queue.getJobs('pending', { limit: 1 });
  await step('change priority', () => queue.changePriority(waiting[0]?.id ?? 'none', 7));
  await step('update data', () => queue.updateData(waiting[0]?.id ?? 'none', { updated: 'OK' }));
  await step('set dead retention', () => queue.setDeadRetention({ maxCount: 100 }));
  await step('dead retention', () => queue.deadRetention());
  await step('add one to bury', () => queue.add('dies', { maxAttempts: 1 }));
  const doomed = await step('claim it', () => leases(queue).claim(10, 30_000));
  await step('fail them', () => leases(queue).fail(held(doomed?.jobs ?? []).map((h) => ({ ...h, error: 'x' }))));
  await step('wait for a dead job', () => queue.waitFor(doomed?.jobs[0]?.id ?? 'none', { timeoutMs: 0 }));
  await step('reprocess dead', () => queue.reprocessDead());
  await step('clean completed', () => queue.clean('completed'));
  await step('clean dead', () => queue.clean('dead'));
  await step('drain', () => queue.drain());
  await step('remove the scheduler', () => queue.removeScheduler('tick'));
  await step('remove it again', () => queue.removeScheduler('tick'));
  const flows = new Flows(transport);
  const flow = { queue: queue.name, id: 'flow', payload: 'parent', children: [{ queue: queue.name, payload: 'child' }, { queue: queue.name, payload: 'dies', maxAttempts: 1, onFailure: 'ignore' as const }] };
  await step('add a flow', () => flows.add(flow));
  await step('add it again', () => flows.add(flow));
  await step('the waiting parent', () => queue.getJob('flow'));
  const children = await step('claim its children', () => leases(queue).claim(10, 30_000));
  await step('complete one child', () => leases(queue).complete(held(children?.jobs ?? []).slice(0, 1).map((h) => ({ ...h, result: '"page"' }))));
  await step('fail the other', () => leases(queue).fail(held(children?.jobs ?? []).slice(1).map((h) => ({ ...h, error: 'x' }))));
  await step('claim the released parent', () => leases(queue).claim(10, 30_000));
  await step('remove a flow parent', async () => {
    await flows.add({ ...flow, id: 'gone' });
    await queue.remove('gone');
    return queue.getJob('gone.0');
  });
  // durable steps: a step recorded, a wait, its event (sent twice), the job claimed with its steps
  await step('add a job with steps', () => queue.add('stepper', { id: 'steps' }));
  const stepping = held((await step('claim it for its steps', () => leases(queue).claim(10, 30_000)))?.jobs ?? []);
  const record = JSON.stringify({ n: 'a', k: 'run', s: 'done', r: '"OK ✓"', a: 1 });
  await step('record a step', () => scriptsOf(queue).run(stepOp(stepping.map((h) => ({ ...h, index: 1, kind: 'd' as const, ms: 3, name: 'a', record })))));
  await step('suspend at a wait', () =>
    scriptsOf(queue).run(suspendOp(stepping.map((h) => ({ ...h, index: 2, name: 'w', how: 'w' as const, number: -1, event: 'ev', shape: 'k', values: '["v"]' })))),
  );
  await step('the waiting jobs', () => queue.getJobs('awaiting'));
  await step('send its event', () => queue.sendEvent('ev', { k: 'v' }, { id: 'e1' }));
  await step('send it again', () => queue.sendEvent('ev', { k: 'v' }, { id: 'e1' }));
  await step('the job with its steps', () => queue.getJob('steps'));
  await step('claim it with its steps', () => leases(queue).claim(10, 30_000));
  await step('events settings', () => queue.eventsSettings());
  await step('set events', () => queue.setEvents({ resultBytes: 512 }));
  await step('read events', () => queue.readEvents({ limit: 1000 }));
  await step('watch the stream', () => scriptsOf(queue).run(watchJobOp('')));
  await step('watch a job past the kind door', () => scriptsOf(queue).run(watchJobOp('not-a-job')));
  await step('read events after a bad id', () => scriptsOf(queue).run(readEventsOp('$', 10)));
  await step('kind door', () => scriptsOf(queue).run(completeOp([{ id: 'not-a-job', token: 1 }], { keepMs: 1000 })));
  await step('a malformed number', () => scriptsOf(queue).run(claimOp(-1, 0)));
  // the registry holds every queue of the run's Redis: only this queue's presence is comparable
  await step('list queues', async () => (await listQueues(transport)).includes(queue.name));
  await step('final stats', () => queue.stats());
  await step('obliterate while active', () => queue.obliterate());
  await step('obliterate', () => queue.obliterate({ force: true }));
  return steps;
}

describe('UpstashTransport and IoredisTransport answer alike', () => {
  let bridge: RunningBridge;
  const raw = new Redis(inject('redisUrl'), { protocol: 2 });
  const names: string[] = [];

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl: inject('redisUrl'), token: 'conformance' });
  });
  afterAll(async () => {
    for (const name of names) {
      const keys = await raw.keys(`emq:{${name}}:*`);
      if (keys.length > 0) await raw.del(...keys);
    }
    raw.disconnect();
    await bridge.close();
  });

  it('every script, the same scenario on two queues: equal raw replies and equal typed results', async () => {
    const node = new Recorder(IoredisTransport.connect(inject('redisUrl')));
    const edge = new Recorder(UpstashTransport.connect({ url: bridge.url, token: 'conformance', retry: false }));
    const runs = [];
    for (const transport of [node, edge]) {
      const name = queueName('conform');
      names.push(name);
      runs.push({ name, steps: await scenario(transport, new Queue(transport, name)) });
    }
    await node.close();
    await edge.close();

    // the scenario really went through every script, and through the bridge
    expect(new Set(node.answers.map((a) => a.script))).toEqual(new Set(Object.keys(scripts)));
    expect(edge.answers.length).toBe(node.answers.length);
    expect(bridge.stats().commands).toBeGreaterThanOrEqual(edge.answers.length);

    const [a, b] = runs as [(typeof runs)[0], (typeof runs)[0]];
    const comparable = (answers: Answer[], name: string): unknown =>
      normalize(
        answers.map((answer) =>
          answer.script === 'listQueues' && Array.isArray(answer.reply) ? { ...answer, reply: answer.reply.includes(name) } : answer,
        ),
        name,
      );
    expect(comparable(edge.answers, b.name)).toEqual(comparable(node.answers, a.name));
    expect(normalize(b.steps, b.name)).toEqual(normalize(a.steps, a.name));
    // and the typed results are the ones the scenario means (spot checks that it did something)
    const typed = new Map(a.steps);
    expect(typed.get('add a duplicate')).toEqual({ id: 'JOB:OK', state: 'duplicate' });
    expect(typed.get('complete it again: a repeat')).toMatchObject({ completed: [true] });
    expect(typed.get('progress')).toEqual([true, true]);
    expect(typed.get('get the completed job, its result and progress')).toMatchObject({
      state: 'completed',
      result: { text: 'résultat ✓ 🚀', list: [1, null, 'OK'] },
      progress: { step: 'héllo ✓', done: 0.5 },
    });
    expect(typed.get('reprocess a live job')).toMatchObject({ code: 'EMQSTATE' });
    expect(typed.get('kind door')).toMatchObject({ code: 'EMQKIND' });
    expect(typed.get('a malformed number')).toMatchObject({ code: 'EMQARG' });
    expect(typed.get('list queues')).toBe(true);
    expect(typed.get('the scheduler after the beat fired it')).toMatchObject([{ id: 'tick', fired: 1, job: { group: 'OK', priority: 2 } }]);
    expect(typed.get('remove it again')).toBe(false);
    expect(typed.get('claim the released parent')).toMatchObject({ jobs: [{ id: 'JOB:flow', children: [{ state: 'completed', result: 'page' }, { state: 'failed', error: 'x' }] }] });
    expect(typed.get('remove a flow parent')).toBeNull();
    expect(typed.get('obliterate while active')).toMatchObject({ code: 'EMQSTATE' });
    expect(typed.get('obliterate')).toBe(true);
    expect(typed.get('set events')).toEqual({ maxLen: 10_000, resultBytes: 512 });
    expect((typed.get('read events') as { events: Array<{ event: string }> }).events.map((e) => e.event)).toContain('stalled');
    expect(typed.get('read events after a bad id')).toMatchObject({ code: 'EMQARG' });
    expect(typed.get('the groups')).toMatchObject({ groups: [{ group: 'OK' }, { group: 'g-1', limit: null, rate: { limit: 5, periodMs: 60_000 } }], cursor: null });
    expect(typed.get('list groups past a bad cursor')).toMatchObject({ code: 'EMQARG' });
    expect((typed.get('claim') as { jobs: Array<Job<unknown>> }).jobs.map((j) => j.group)).toContain('g-1');
  });
});
