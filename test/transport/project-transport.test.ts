import { describe, expect, inject, it } from 'vitest';
import { UpstashTransport } from '../../src/edge/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { keysOf, useRedis } from '../helpers.js';

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
    } else {
      expect(redis.transport).toBeInstanceOf(IoredisTransport);
      expect(bridge).toBeNull();
    }
    const queue = redis.queue();
    await queue.add({ via: inject('transport') }, { id: 'seen' });
    expect(await redis.raw.hget(keysOf(queue).job('JOB:seen'), 'd')).toBe(JSON.stringify({ via: inject('transport') }));
  });
});
