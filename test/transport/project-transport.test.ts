import { Cluster } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { UpstashTransport } from '../../src/edge/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { slotOf } from '../../src/cluster-slot.js';
import { runOps, Scripts } from '../../src/ops/scripts.js';
import { keysOf, useRedis } from '../helpers.js';
import { countsOp } from '../../src/ops/counts.js';

/**
 * The fixture itself: in the upstash project the Redis suites must really run over
 * @upstash/redis and the bridge, or the second project would only repeat the first.
 */
describe(`useRedis() in the ${inject('transport')} project`, () => {
  const redis = useRedis();

  it('hands out the project transport, and it reaches the same Redis the raw client reads', async () => {
    const bridge = inject('bridge');
    if (inject('transport') === 'upstash') {
      expect(redis.transport).toBeInstanceOf(UpstashTransport);
      expect(bridge?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // cluster-upstash: the raw client reads the cluster the bridge runs over
      if (inject('clusterNodes')) expect(redis.raw).toBeInstanceOf(Cluster);
    } else if (inject('transport') === 'cluster') {
      expect(redis.transport).toBeInstanceOf(IoredisTransport);
      expect((redis.transport as IoredisTransport).redis).toBeInstanceOf(Cluster);
    } else {
      expect(redis.transport).toBeInstanceOf(IoredisTransport);
      expect(bridge).toBeNull();
    }
    const queue = redis.queue();
    await queue.add({ via: inject('transport') }, { id: 'seen' });
    expect(await redis.raw.hget(keysOf(queue).job('JOB:seen'), 'd')).toBe(JSON.stringify({ via: inject('transport') }));
  });

  it.runIf(inject('clusterNodes') !== null)('runs one round trip over queues on different masters, each call on its own', async () => {
    const cluster = redis.raw as unknown as Cluster;
    await cluster.ping();
    // queues until three masters serve them
    const byMaster = new Map<string, ReturnType<typeof redis.queue>>();
    for (let i = 0; byMaster.size < 3 && i < 200; i++) {
      const queue = redis.queue();
      const master = cluster.slots[slotOf(keysOf(queue).key('meta'))]![0]!;
      if (!byMaster.has(master)) byMaster.set(master, queue);
    }
    expect(byMaster.size).toBe(3);
    const queues = [...byMaster.values()];
    // one batch of calls, a queue each: each lands on its master and nowhere else
    const ops = queues.flatMap((queue) => [new Scripts(redis.transport, queue.name).bind(countsOp())]);
    expect((await runOps(redis.transport, ops)).map((c) => c.pending)).toEqual([0, 0, 0]);
    for (const [master, queue] of byMaster) {
      await queue.add({ on: master }, { id: 'here' });
      const node = cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === master)!;
      expect(await node.hget(keysOf(queue).job('JOB:here'), 'd')).toBe(JSON.stringify({ on: master }));
    }
  });
});
