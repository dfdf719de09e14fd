import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { clusterNode } from './cluster-node.js';
import { DEFAULT_REDIS_URL, redisTargetFromEnv, targetName } from './redis-target.js';

describe('redisTargetFromEnv', () => {
  it('reads REDIS_URL, else the default, an empty variable counting as unset', () => {
    expect(redisTargetFromEnv({ REDIS_URL: 'redis://db:6380' })).toEqual({ kind: 'url', url: 'redis://db:6380' });
    expect(redisTargetFromEnv({})).toEqual({ kind: 'url', url: DEFAULT_REDIS_URL });
    expect(redisTargetFromEnv({ REDIS_URL: '', REDIS_CLUSTER_NODES: '' })).toEqual({ kind: 'url', url: DEFAULT_REDIS_URL });
  });

  it('reads REDIS_CLUSTER_NODES, whitespace around entries tolerated, IPv6 in brackets', () => {
    expect(redisTargetFromEnv({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000 ,redis-b:7001,[::1]:7002 ', REDIS_URL: '' })).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  it('refuses both, and names an entry that is not host:port', () => {
    expect(() => redisTargetFromEnv({ REDIS_URL: 'redis://a:1', REDIS_CLUSTER_NODES: 'b:2' })).toThrow(
      new InvalidArgumentError('set REDIS_URL or REDIS_CLUSTER_NODES, not both'),
    );
    for (const [list, entry] of [
      ['a:1,b', 'b'],
      ['a:1,,b:2', ''],
      ['a:0', 'a:0'],
      ['a:65536', 'a:65536'],
      ['redis://a:1', 'redis://a:1'],
      ['a b:1', 'a b:1'],
    ] as const) {
      expect(() => redisTargetFromEnv({ REDIS_CLUSTER_NODES: list }), list).toThrow(`REDIS_CLUSTER_NODES: ${JSON.stringify(entry)} is not host:port (e.g. 127.0.0.1:7000)`);
    }
  });
});

describe('targetName', () => {
  it('names a URL without its password, a cluster by its nodes', () => {
    expect(targetName({ kind: 'url', url: 'redis://app:s3cret@db:6379/2' })).toBe('redis://app:***@db:6379/2');
    expect(targetName({ kind: 'cluster', nodes: [clusterNode('a:1'), clusterNode('[::1]:2')] })).toBe('Redis Cluster a:1,[::1]:2');
  });
});
