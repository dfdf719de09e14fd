import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { ServedQueues } from './served-queues.js';

describe('ServedQueues', () => {
  const mail = (): void => {};
  const thumbs = (): void => {};

  it("expands a partitioned queue into its partitions, each with the queue's handler", () => {
    const served = new ServedQueues({ mail, thumbs }, { mail: 3 });
    expect(served.drained()).toEqual(['mail~0', 'mail~1', 'mail~2', 'thumbs']);
    expect(served.partitionsOf('mail')).toEqual(['mail~0', 'mail~1', 'mail~2']);
    expect(served.partitionsOf('thumbs')).toBeUndefined();
    expect(served.resolve('mail~2')).toEqual({ name: 'mail~2', handler: mail, partitions: 3 });
    expect(served.resolve('thumbs')).toEqual({ name: 'thumbs', handler: thumbs, partitions: undefined });
  });

  it('serves no partition past the count, no partition of a plain queue, and not the partitioned name itself', () => {
    const served = new ServedQueues({ mail, thumbs }, { mail: 3 });
    expect(served.resolve('mail~3')).toBeUndefined();
    expect(served.resolve('mail~03')).toBeUndefined();
    expect(served.resolve('thumbs~0')).toBeUndefined();
    expect(served.resolve('mail')).toBeUndefined();
    expect(served.resolve('toString')).toBeUndefined();
    expect(served.resolve('toString~0')).toBeUndefined();
    expect(served.partitionsOf('constructor')).toBeUndefined();
  });

  it('refuses a count that is no count, or one for a queue without a handler', () => {
    expect(() => new ServedQueues({ mail }, { mail: 0 })).toThrow(InvalidArgumentError);
    expect(() => new ServedQueues({ mail }, { mail: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => new ServedQueues({ mail }, { mail: 1025 })).toThrow(InvalidArgumentError);
    expect(() => new ServedQueues({ mail }, { thumbs: 2 })).toThrow(/no handler/);
  });
});
