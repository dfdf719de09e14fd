import { describe, expect, it } from 'vitest';
import { Flows, PartitionedQueue, Queue } from '../../src/index.js';
import { useCountedRedis } from '../counted-redis.js';
import { leases, queueName } from '../helpers.js';

/**
 * What one job costs Redis on each path it can travel, in commands (INFO commandstats on a Redis
 * of this suite's own), pinned exactly: a change that adds a command to a path, or saves one,
 * fails here and names the path, and its commit updates the pin (issue 32). `add` is one awaited
 * `add` of a queue that is registered and warm (its scripts loaded, one job through the same
 * path before); `life` is that add and the job's claim and completion, one job a call: the
 * single-job path a consumer at concurrency 1 takes. The batched paths are
 * test/node/commands-per-job.test.ts's.
 */
interface PathCost {
  readonly add: number;
  readonly life: number;
}

/** One path: how its queue is set up and how its job is added. */
interface Path {
  readonly name: string;
  readonly setup?: (queue: Queue) => Promise<void>;
  readonly add?: (queue: Queue, i: number) => Promise<unknown>;
  /** What to do between the add and the claim (a delayed job's wait and promotion). */
  readonly beforeClaim?: (queue: Queue) => Promise<void>;
  /** The jobs one add makes, claimed and completed one a call (1; a flow's parent and child: 2). */
  readonly jobs?: number;
  /** The queue the jobs are claimed from (the one added to; a partitioned queue's partition). */
  readonly claimFrom?: (queue: Queue) => Queue;
  /** What the path costs. */
  readonly pin: PathCost;
}

/** The partitioned queue (4 partitions) over a path's queue name, made once per queue. */
const partitioned = new WeakMap<Queue, PartitionedQueue>();
const partitionedOf = (queue: Queue): PartitionedQueue => {
  let found = partitioned.get(queue);
  if (!found) partitioned.set(queue, (found = new PartitionedQueue(queue.transport, queue.name, { partitions: 4 })));
  return found;
};

const PATHS: readonly Path[] = [
  { name: 'plain, events off', setup: (q) => q.setEvents({ maxLen: 0 }).then(() => undefined), pin: { add: 10, life: 36 } },
  { name: 'plain (events on, the default)', pin: { add: 11, life: 39 } },
  { name: 'grouped', add: (q) => q.add({}, { group: 'g' }), pin: { add: 14, life: 48 } },
  { name: 'grouped, the group limited', setup: (q) => q.setGroupLimit('g', 5), add: (q) => q.add({}, { group: 'g' }), pin: { add: 15, life: 49 } },
  { name: 'a queue rate limit', setup: (q) => q.setRateLimit({ limit: 1000, periodMs: 1000 }), pin: { add: 11, life: 43 } },
  { name: 'a group rate limit', setup: (q) => q.setGroupRateLimit('g', { limit: 1000, periodMs: 1000 }), add: (q) => q.add({}, { group: 'g' }), pin: { add: 14, life: 53 } },
  { name: 'a dedupe key', add: (q, i) => q.add({}, { dedupe: { key: `k${i}` } }), pin: { add: 15, life: 45 } },
  { name: 'an id given', add: (q, i) => q.add({}, { id: `order-${i}` }), pin: { add: 12, life: 40 } },
  // a feature's flag set (lua/includes/queue_meta.lua) by a use of it long over: what its reads
  // cost a plain job from then on, where a queue that never used it pays none
  { name: 'a queue that throttled once (meta th)', setup: (q) => q.holdGroup('other', 1).then(() => undefined), pin: { add: 12, life: 40 } },
  {
    name: 'a queue with a scheduler (meta sc)',
    setup: (q) => q.upsertScheduler('far', { every: 3_600_000 }, { payload: {} }).then(() => undefined),
    pin: { add: 11, life: 39 },
  },
  {
    name: 'a queue where a job recorded a durable step once (meta st)',
    setup: async (q) => {
      await q.add({}, { id: 'stepped' });
      const l = leases(q);
      const [job] = (await l.claim(1, 30_000)).jobs;
      await l.steps.write(job!, { index: 1, kind: 'd', ms: 0, name: 'a', record: '{"n":"a","k":"run","s":"done"}' });
      await l.complete([job!]);
    },
    pin: { add: 11, life: 39 },
  },
  { name: 'a priority', add: (q) => q.add({}, { priority: 5 }), pin: { add: 11, life: 40 } },
  {
    name: 'delayed, then promoted',
    add: (q) => q.add({}, { delayMs: 1 }),
    beforeClaim: async (q) => {
      await new Promise((r) => setTimeout(r, 5));
      await leases(q).promote();
    },
    pin: { add: 10, life: 54 },
  },
  {
    name: 'a flow: a parent and its child',
    add: (q) => new Flows(q.transport).add({ queue: q.name, payload: {}, children: [{ queue: q.name, payload: {} }] }),
    jobs: 2,
    pin: { add: 26, life: 101 },
  },
  {
    name: 'a partitioned queue (4 partitions), grouped',
    add: (q) => partitionedOf(q).add({}, { group: 'g' }),
    claimFrom: (q) => partitionedOf(q).partitionOfAdded('', 'g'),
    pin: { add: 15, life: 49 },
  },
];

describe('Redis commands per job, path by path', () => {
  const redis = useCountedRedis();

  async function costOf(path: Path): Promise<PathCost> {
    const queue = new Queue(redis.transport, queueName('path'));
    await path.setup?.(queue);
    const add = path.add ?? ((q: Queue) => q.add({}));
    const from = path.claimFrom?.(queue) ?? queue;
    const once = async (i: number): Promise<PathCost> => {
      await redis.raw.config('RESETSTAT');
      await add(queue, i);
      const added = await redis.commandsSinceReset();
      await path.beforeClaim?.(from);
      for (let j = 0; j < (path.jobs ?? 1); j++) {
        const { jobs } = await leases(from).claim(1, 60_000);
        expect(jobs).toHaveLength(1);
        expect((await leases(from).complete([{ id: jobs[0]!.id, token: jobs[0]!.token }])).completed).toEqual([true]);
      }
      return { add: added, life: await redis.commandsSinceReset() };
    };
    // Redis's minute now: a job's completion counted in a minute of its own (lua/includes/count_minute.lua)
    const minute = async (): Promise<number> => Math.floor(Number((await redis.raw.time())[0]) / 60);
    await once(0); // the path warm: scripts loaded, the queue registered, its keys made
    for (let i = 1; ; i++) {
      const before = await minute();
      const cost = await once(i);
      // the first completion of a minute also trims and re-arms its bucket (two commands, once a
      // minute): a measure that crossed into a new minute is taken again, inside the minute
      if ((await minute()) === before) return cost;
    }
  }

  it.each(PATHS)('$name: $pin.add commands an add, $pin.life a life', async (path) => {
    expect(await costOf(path)).toEqual(path.pin);
  });
});
