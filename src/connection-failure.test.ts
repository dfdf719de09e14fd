import { describe, expect, it } from 'vitest';
import { connectionError, failureOf, redactUrl } from './connection-failure.js';
import { ConnectionError, RedisError } from './errors.js';

const coded = (message: string, code: string): Error => Object.assign(new Error(message), { code });

describe('failureOf', () => {
  it('tells each cause by its code, its name, its message, or its cause', () => {
    expect(failureOf(coded('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'))).toBe('refused');
    expect(failureOf(coded('getaddrinfo ENOTFOUND nonexistent.invalid', 'ENOTFOUND'))).toBe('dns');
    expect(failureOf(coded('getaddrinfo EAI_AGAIN redis', 'EAI_AGAIN'))).toBe('dns');
    expect(failureOf(coded('connect ETIMEDOUT', 'ETIMEDOUT'))).toBe('timeout');
    expect(failureOf(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))).toBe('timeout');
    expect(failureOf(coded('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'))).toBe('tls');
    expect(failureOf(coded('wrong version number', 'ERR_SSL_WRONG_VERSION_NUMBER'))).toBe('tls');
    expect(failureOf(new Error('WRONGPASS invalid username-password pair or user is disabled.'))).toBe('auth');
    expect(failureOf(new Error('NOAUTH Authentication required.'))).toBe('auth');
    expect(failureOf(coded('read ECONNRESET', 'ECONNRESET'))).toBe('lost');
    expect(failureOf(new Error('Reached the max retries per request limit (which is 0).'))).toBe('lost');
    // a cluster client's (ioredis Cluster) while a master fails over, or with no node reachable
    expect(failureOf(new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'))).toBe('lost');
    expect(failureOf(new Error('CLUSTERDOWN The cluster is down'))).toBe('lost');
    expect(failureOf(new Error('None of startup nodes is available'))).toBe('refused');
    expect(failureOf(new Error('Failed to refresh slots cache.'))).toBe('refused');
    expect(failureOf(new Error('fetch failed', { cause: coded('connect ECONNREFUSED', 'ECONNREFUSED') }))).toBe('refused');
  });

  it('is undefined for what Redis replied', () => {
    expect(failureOf(new Error('NOSCRIPT No matching script'))).toBeUndefined();
    expect(failureOf(new Error('EMQARG bad delay'))).toBeUndefined();
    expect(failureOf('a string')).toBeUndefined();
  });
});

describe('connectionError', () => {
  it('names the URL, the wait and the cause in one line, as a RedisError', () => {
    const error = connectionError('redis://127.0.0.1:1', 'refused', { cause: coded('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'), withinMs: 5000 });
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toBeInstanceOf(RedisError);
    expect(error).toMatchObject({ code: 'EMQREDIS', status: 503, reason: 'refused', url: 'redis://127.0.0.1:1' });
    expect(error.message).toBe('cannot reach Redis at redis://127.0.0.1:1 within 5000 ms: connection refused (connect ECONNREFUSED 127.0.0.1:1)');
    expect(connectionError('redis://h:6379', 'refused', { wasConnected: true, detail: 'x' }).message).toBe('cannot reach Redis at redis://h:6379: connection lost, then connection refused (x)');
  });
});

describe('redactUrl', () => {
  it('keeps the user, hides the password, drops the query', () => {
    expect(redactUrl('redis://app:s3cret@redis.internal:6379/2')).toBe('redis://app:***@redis.internal:6379/2');
    expect(redactUrl('rediss://:s3cret@h:6380')).toBe('rediss://:***@h:6380');
    expect(redactUrl('redis://h:6379?password=s3cret')).toBe('redis://h:6379');
    expect(redactUrl('redis://h')).toBe('redis://h');
    expect(redactUrl('not a url with s3cret')).toBe('the Redis URL');
  });
});
