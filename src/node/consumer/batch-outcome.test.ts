import { describe, expect, it } from 'vitest';
import { RetryAfterError, UnrecoverableError } from '../../handler.js';
import type { Job } from '../../job.js';
import { type BatchOutcome, batchOutcomes } from './batch-outcome.js';
import type { BatchHandler } from './batch-slots.js';

describe('batchOutcomes: what a batch handler returned, per job', () => {
  it('nothing completes every job; one outcome per job settles each as it says', () => {
    expect(batchOutcomes(undefined, 3)).toEqual([{ kind: 'complete' }, { kind: 'complete' }, { kind: 'complete' }]);
    const error = new Error('the row is locked');
    const outcomes: BatchOutcome[] = [
      'completed',
      { retry: 'busy' },
      { retry: error, delayMs: 250 },
      { fail: new UnrecoverableError('malformed') },
      { fail: 'duplicate row' },
    ];
    expect(batchOutcomes(outcomes, 5)).toEqual([
      { kind: 'complete' },
      { kind: 'retry', error: 'busy' },
      { kind: 'retry', error: expect.stringMatching(/^Error: the row is locked\n\s+at /), delayMs: 250 },
      { kind: 'fail', error: expect.stringMatching(/^UnrecoverableError: malformed/) },
      { kind: 'fail', error: 'duplicate row' },
    ]);
    expect(batchOutcomes([], 0)).toEqual([]);
  });

  it('{ completed: result } completes its job with that result; one JSON cannot carry or over the cap fails it for good', () => {
    const outcomes: BatchOutcome[] = [{ completed: { rowId: 7 } }, { completed: 'completed' }, { completed: undefined }, 'completed', { completed: 10n }, { completed: 'x'.repeat(40) }];
    expect(batchOutcomes(outcomes, 6, 32)).toEqual([
      { kind: 'complete', result: '{"rowId":7}' },
      { kind: 'complete', result: '"completed"' },
      { kind: 'complete' },
      { kind: 'complete' },
      { kind: 'fail', error: expect.stringMatching(/^PayloadError \(EMQPAYLOAD\): the handler's result is not JSON-serialisable: .*; failed for good/) },
      { kind: 'fail', error: expect.stringMatching(/^PayloadTooLargeError \(EMQTOOLARGE\): the handler's result is 42 bytes of JSON, over maxResultBytes \(32\)/) },
    ]);
    // the default cap is 64 KiB
    expect(batchOutcomes([{ completed: 'x'.repeat(70_000) }], 1)).toMatchObject([{ kind: 'fail', error: expect.stringContaining('over maxResultBytes (65536)') }]);
    // one kind per entry: a result beside a retry is no outcome, not a guess
    expect(batchOutcomes([{ completed: 1, retry: 'x' }], 1)).toMatchObject([{ kind: 'retry', error: expect.stringContaining('outcome 0 of 1 is {"completed":1,"retry":"x"}') }]);
  });

  it('the key is the kind, whatever the error class: a retry of an UnrecoverableError is a retry, its delay only delayMs', () => {
    expect(batchOutcomes([{ retry: new UnrecoverableError('x') }, { retry: new RetryAfterError('later', 900) }], 2)).toEqual([
      { kind: 'retry', error: expect.stringMatching(/^UnrecoverableError: x/) },
      { kind: 'retry', error: expect.stringMatching(/^RetryAfterError: later/) },
    ]);
  });

  it('an array of the wrong length retries every job, naming both lengths', () => {
    for (const [result, count] of [[['completed'], 3], [['completed', 'completed', 'completed', 'completed'], 3], [[], 2]] as const) {
      const outcomes = batchOutcomes(result, count);
      expect(outcomes).toHaveLength(count);
      for (const outcome of outcomes) {
        expect(outcome).toEqual({
          kind: 'retry',
          error: `InvalidArgumentError (EMQARG): the batch handler returned ${result.length} outcomes for ${count} jobs: return one per job, in order ('completed', {completed: result}, {retry: error, delayMs?} or {fail: error}), or nothing to complete them all`,
        });
      }
    }
  });

  it('a result that is neither nothing nor an array retries every job, saying what came back', () => {
    for (const [result, shown] of [[null, 'null'], ['completed', '"completed"'], [true, 'true'], [{ completed: 1 }, '{"completed":1}']] as const) {
      expect(batchOutcomes(result, 2)).toEqual(
        Array.from({ length: 2 }, () => ({
          kind: 'retry',
          error: expect.stringContaining(`InvalidArgumentError (EMQARG): the batch handler resolved with ${shown} for 2 jobs`) as unknown,
        })),
      );
    }
  });

  it('an entry that is no outcome retries its own job, saying which: the earlier untyped forms included', () => {
    const entries = [undefined, null, new Error('old style'), 'ok', false, { retry: 'x', delayMs: -1 }, { retry: 'x', fail: 'y' }, {}, 'completed'];
    const outcomes = batchOutcomes(entries, entries.length);
    expect(outcomes.at(-1)).toEqual({ kind: 'complete' });
    const errors = outcomes.slice(0, -1).map((o) => (o.kind === 'retry' ? o.error : o.kind));
    expect(errors).toEqual([
      expect.stringMatching(/^InvalidArgumentError \(EMQARG\): outcome 0 of 9 is undefined, not 'completed', \{completed: result\}, \{retry: error, delayMs\?\} or \{fail: error\}$/),
      expect.stringContaining('outcome 1 of 9 is null'),
      expect.stringContaining('outcome 2 of 9 is an Error (Error)'),
      expect.stringContaining('outcome 3 of 9 is "ok"'),
      expect.stringContaining('outcome 4 of 9 is false'),
      expect.stringContaining("outcome 5 of 9 has delayMs -1: an integer >= 0, or none for the job's backoff"),
      expect.stringContaining('outcome 6 of 9 is {"retry":"x","fail":"y"}'),
      expect.stringContaining('outcome 7 of 9 is {}'),
    ]);
  });

  it('types: outcomes written inline need no annotation', () => {
    // compile-time: literal outcomes in a map callback are inferred as BatchOutcome
    const handler: BatchHandler<{ ok: boolean }> = async (jobs: ReadonlyArray<Job<{ ok: boolean }>>) =>
      jobs.map((job) => (job.payload.ok ? 'completed' : { retry: 'not ok', delayMs: 1_000 }));
    const sync: BatchHandler<number> = (jobs) => (jobs.length > 1 ? jobs.map(() => ({ fail: 'no' })) : undefined);
    const withResults: BatchHandler<number, { doubled: number }> = async (jobs) => jobs.map((job) => ({ completed: { doubled: job.payload * 2 } }));
    // @ts-expect-error a result of another type than the handler's Result
    const wrongResult: BatchHandler<number, { doubled: number }> = async (jobs) => jobs.map(() => ({ completed: 'twice' }));
    expect(typeof withResults).toBe('function');
    expect(typeof wrongResult).toBe('function');
    expect(typeof handler).toBe('function');
    expect(typeof sync).toBe('function');
  });
});
