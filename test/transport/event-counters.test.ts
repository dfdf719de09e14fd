import { describe, expect, it } from 'vitest';
import { queueOverviews } from '../../src/index.js';
import { renderMetrics } from '../../src/http/metrics.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, until, useRedis } from '../helpers.js';

/**
 * The counters behind `/metrics`' emq_jobs_retried_total and emq_jobs_stalled_total: meta
 * `retried` and `stalled`, added to by the scripts that append those events, once a call.
 */
describe('the retried and stalled counters', () => {
  const redis = useRedis();

  it('retry counts the jobs it retries (not those it buries, nor a fenced one or a repeat); the reaper and the beat count the leases they reap', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1, maxAttempts: 3 }, { payload: 2, maxAttempts: 3 }, { payload: 3, maxAttempts: 1 }]);
    const { jobs } = await leases(queue).claim(3, 30_000);
    const items = jobs.map((j, i) => ({ id: j.id, token: j.token, error: 'e', delayMs: i === 0 ? 60_000 : 0 }));
    expect(await leases(queue).retry(items)).toEqual(['scheduled', 'pending', 'dead']);
    expect(await redis.raw.hget(k.key('meta'), 'retried')).toBe('2');
    // sent again (a reply lost), and a holder fenced off: nothing more
    expect(await leases(queue).retry(items.slice(0, 2))).toEqual(['scheduled', 'pending']);
    expect(await leases(queue).retry([{ ...items[1]!, token: items[1]!.token + 1000 }])).toEqual(['fenced']);
    expect(await redis.raw.hget(k.key('meta'), 'retried')).toBe('2');
    expect(await redis.raw.hexists(k.key('meta'), 'stalled')).toBe(0);

    // two leases lapse: one goes back, one (its last attempt) is buried; both stalled
    await queue.add(4, { maxAttempts: 2 });
    const lapsed = await leases(queue).claim(2, 1);
    expect(lapsed.jobs).toHaveLength(2);
    const now = async () => (await redis.serverNow()) > Math.max(...lapsed.jobs.map((j) => j.leaseUntil));
    await until(now);
    expect(await leases(queue).reap()).toEqual({ requeued: 2, buried: 0 });
    expect(await redis.raw.hget(k.key('meta'), 'stalled')).toBe('2');
    const again = await leases(queue).claim(2, 1);
    await until(async () => (await redis.serverNow()) > Math.max(...again.jobs.map((j) => j.leaseUntil)));
    const beat = await leases(queue).beat({ reapLimit: 100, promoteLimit: 0, n: 0, leaseMs: 1000 });
    expect(beat.requeued + beat.buried).toBe(2);
    expect(await redis.raw.hget(k.key('meta'), 'stalled')).toBe('4');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const [overview] = (await queueOverviews(redis.transport)).filter((o) => o.queue === queue.name);
    expect(overview).toMatchObject({ retriedTotal: 2, stalledTotal: 4 });
    const text = await renderMetrics(redis.transport);
    expect(text).toContain(`emq_jobs_retried_total{queue="${queue.name}"} 2`);
    expect(text).toContain(`emq_jobs_stalled_total{queue="${queue.name}"} 4`);
    expect(text).toContain('# TYPE emq_jobs_retried_total counter');
  });
});
