import { describe, expect, it } from 'vitest';
import { editDistance, nearest } from './nearest.js';

describe('editDistance', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('concurency', 'concurrency')).toBe(1);
    expect(editDistance('flaw', 'lawn')).toBe(2);
    expect(editDistance('same', 'same')).toBe(0);
  });
});

describe('nearest', () => {
  const consume = ['--handler', '--concurrency', '--lease-ms', '--beat-ms', '--timeout-ms', '--stop-timeout-ms', '--quiet'];
  it('names the option a typo meant', () => {
    expect(nearest('--concurency', consume)).toBe('--concurrency');
    expect(nearest('--handle', consume)).toBe('--handler');
    expect(nearest('--queit', consume)).toBe('--quiet');
    expect(nearest('--timeout', consume)).toBe('--timeout-ms');
    expect(nearest('--lease', consume)).toBe('--lease-ms');
    expect(nearest('consme', ['consume', 'enqueue', 'stats', 'serve', 'bridge', 'init'])).toBe('consume');
    expect(nearest('serv', ['consume', 'enqueue', 'stats', 'serve', 'bridge', 'init'])).toBe('serve');
  });

  it('names nothing when nothing is close', () => {
    expect(nearest('--verbose', consume)).toBeUndefined();
    expect(nearest('frobnicate', ['consume', 'enqueue', 'stats', 'serve', 'bridge', 'init'])).toBeUndefined();
    expect(nearest('--x', [])).toBeUndefined();
  });
});
