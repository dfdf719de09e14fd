import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../errors.js';
import { settingsOf } from './options.js';

describe('settingsOf', () => {
  it('fills in the defaults: a 30 s lease renewed every third, a 5 s beat, no timeout, auto prefetch', () => {
    expect(settingsOf({})).toEqual({ leaseMs: 30_000, beatMs: 5_000, timeoutMs: 0, renewMs: 10_000, stopTimeoutMs: 10_000, prefetch: 'auto', maxResultBytes: 65_536, hooks: {}, log: expect.any(Function) });
    expect(settingsOf({ leaseMs: 2 }).renewMs).toBe(1);
  });

  it("takes the queue's maxResultBytes unless given one of its own", () => {
    expect(settingsOf({}, 1000).maxResultBytes).toBe(1000);
    expect(settingsOf({ maxResultBytes: 10 }, 1000).maxResultBytes).toBe(10);
  });

  it("takes the queue's durability unless given its own, and refuses a bad one", () => {
    const queue = { replicas: 1, timeoutMs: 300 };
    expect(settingsOf({}).replication).toBeUndefined();
    expect(settingsOf({}, 1000, queue).replication).toEqual(queue);
    expect(settingsOf({ durability: 'acknowledged' }, 1000, queue).replication).toBeUndefined();
    expect(settingsOf({ durability: 'replicated' }).replication).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(settingsOf({ replicationTimeoutMs: 50 }, 1000, queue).replication).toEqual({ replicas: 1, timeoutMs: 50 });
    expect(() => settingsOf({ durability: 'majority' as never })).toThrow(/^durability must be 'acknowledged' or 'replicated', got "majority"$/);
    expect(() => settingsOf({ durability: 'replicated', replicationTimeoutMs: 0 })).toThrow(/^replicationTimeoutMs must be an integer from 1/);
  });

  it('refuses a bad option, the first one first', () => {
    expect(() => settingsOf({ leaseMs: 0, prefetch: -1 })).toThrow(/^leaseMs must be an integer from 1 to 2147483647 ms, got 0$/);
    expect(() => settingsOf({ beatMs: Number.NaN })).toThrow(/^beatMs/);
    expect(() => settingsOf({ renewMs: 0.5 })).toThrow(/^renewMs/);
    expect(() => settingsOf({ prefetch: 1.5 })).toThrow(/^prefetch must be 'auto' or an integer from 0 to 1000000, got 1.5$/);
    // 2^53 - 1 was taken: a claim of the slots plus that many was past 2^53, and claim.lua refused it
    expect(() => settingsOf({ prefetch: 2 ** 53 - 1 })).toThrow(/^prefetch must be 'auto' or an integer from 0 to 1000000, got 9007199254740991$/);
    expect(settingsOf({ prefetch: 1_000_000 }).prefetch).toBe(1_000_000);
    expect(settingsOf({ prefetch: 0 }).prefetch).toBe(0);
    expect(() => settingsOf({ log: 'stderr' as unknown as false })).toThrow(/^log must be false or a function/);
    expect(() => settingsOf({ maxResultBytes: 0 })).toThrow(/^maxResultBytes must be a positive integer, got 0$/);
    expect(() => settingsOf({ maxResultBytes: 1.5 })).toThrow(/^maxResultBytes/);
  });

  it('refuses times a timer cannot wait, fractions, and times that are not numbers (each was taken, and the loop then failed or spun)', () => {
    // a fractional lease reached the claim script, which refused every claim (EMQARG, for ever)
    expect(() => settingsOf({ leaseMs: 1.5 })).toThrow(InvalidArgumentError);
    // past 2^31 - 1 ms Node fires a timer after 1 ms: a beat every millisecond, a handler timed out at once
    for (const name of ['leaseMs', 'beatMs', 'renewMs', 'timeoutMs', 'stopTimeoutMs'] as const) {
      expect(() => settingsOf({ [name]: 2 ** 31 }), name).toThrow(new RegExp(`^${name} must be an integer from [01] to 2147483647 ms, got 2147483648$`));
      expect(settingsOf({ [name]: 2 ** 31 - 1 })[name]).toBe(2 ** 31 - 1);
    }
    // a timeout and a stop timeout were not checked at all
    for (const bad of [-1, 1.5, Number.NaN, '100', 10n, Infinity]) {
      expect(() => settingsOf({ timeoutMs: bad as never }), String(bad)).toThrow(InvalidArgumentError);
      expect(() => settingsOf({ stopTimeoutMs: bad as never }), String(bad)).toThrow(InvalidArgumentError);
    }
    expect(settingsOf({ timeoutMs: 0, stopTimeoutMs: 0 })).toMatchObject({ timeoutMs: 0, stopTimeoutMs: 0 });
    // a symbol made the message itself throw a TypeError
    expect(() => settingsOf({ leaseMs: Symbol('x') as never })).toThrow(InvalidArgumentError);
  });

  it('refuses options, hooks and hooks that are not what they say', () => {
    expect(() => settingsOf(null as never)).toThrow(InvalidArgumentError);
    expect(() => settingsOf({ hooks: 5 as never })).toThrow(/^hooks must be an object, got 5$/);
    expect(() => settingsOf({ hooks: { onError: 'log' as never } })).toThrow(/^hooks.onError must be a function, got "log"$/);
    expect(settingsOf({ hooks: { onError: undefined } }).hooks).toEqual({ onError: undefined });
  });
});
