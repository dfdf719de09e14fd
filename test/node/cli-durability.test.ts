import { describe, expect, inject, it } from 'vitest';
import { type Run, startEmq } from '../cli-run.js';
import { keysOf, until, useRedis } from '../helpers.js';

const emq = (args: string[], env: Record<string, string | undefined>): Promise<Run> => startEmq(args, { REDIS_CLUSTER_NODES: undefined, EMQ_TOKEN: undefined, ...env }).done;

/**
 * EMQ_DURABILITY=replicated on a Redis without a replica (the test Redis): every write waits for
 * a replica that never comes, so it fails with EMQREPLICA after EMQ_REPLICATION_TIMEOUT_MS, the
 * write applied all the same (safe to send again); `emq serve` answers such a write 503.
 */
describe('emq with EMQ_DURABILITY=replicated and no replica', () => {
  const redis = useRedis();
  const base = { REDIS_URL: inject('redisUrl'), EMQ_DURABILITY: 'replicated', EMQ_REPLICATION_TIMEOUT_MS: '50' };

  it('enqueue fails with EMQREPLICA in one line (exit 1), the job written on the master', { timeout: 30_000 }, async () => {
    const queue = redis.queue();
    const run = await emq(['enqueue', queue.name, '{"n":1}', '--id', 'one'], base);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/EMQREPLICA|0 of 1 replica/);
    expect(await redis.raw.exists(keysOf(queue).job('JOB:one'))).toBe(1);
  });

  it('serve answers an enqueue 503 EMQREPLICA, the job written; a bad timeout is exit 2', { timeout: 30_000 }, async () => {
    const queue = redis.queue();
    const server = startEmq(['serve', '--port', '0'], { REDIS_CLUSTER_NODES: undefined, EMQ_TOKEN: undefined, ...base });
    try {
      await until(() => /^http:\/\/\S+\n/.test(server.stdout()), 20_000);
      const url = server.stdout().trim();
      const res = await fetch(`${url}/v1/queues/${queue.name}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payload: 1, id: 'two' }) });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('EMQREPLICA');
      expect(await redis.raw.exists(keysOf(queue).job('JOB:two'))).toBe(1);
    } finally {
      server.child.kill('SIGTERM');
      await server.done;
    }
    const bad = await emq(['enqueue', queue.name, '1'], { ...base, EMQ_REPLICATION_TIMEOUT_MS: 'soon' });
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toMatch(/EMQ_REPLICATION_TIMEOUT_MS takes a whole number/);
  });
});
