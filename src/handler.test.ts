import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from './errors.js';
import { completion, contextOf, HandlerTimeoutError, runHandler, UnrecoverableError, type HandlerContext } from './handler.js';
import type { Job } from './job.js';

/** A job as a handler sees it; runHandler reads nothing of it. */
const job = { id: 'JOB:1', payload: 1 } as unknown as Job<number>;

describe('runHandler', () => {
  it('starts the handler before it returns, and a synchronous throw is a retry', async () => {
    let started = false;
    const outcome = runHandler<number>(
      () => {
        started = true;
        throw new Error('thrown before any await');
      },
      job,
      { controller: new AbortController() },
    );
    expect(started).toBe(true);
    expect(await outcome).toEqual({ kind: 'retry', error: expect.stringContaining('thrown before any await') as unknown });
  });

  it('an UnrecoverableError fails for good; a resolve completes', async () => {
    const controller = new AbortController();
    expect(await runHandler(() => Promise.reject(new UnrecoverableError('bad input')), job, { controller })).toMatchObject({ kind: 'fail' });
    expect(await runHandler(async () => {}, job, { controller })).toEqual({ kind: 'complete' });
  });

  it('a timeout aborts the controller, and a signal first read after that is aborted with the reason', async () => {
    const controller = new AbortController();
    let context: HandlerContext | undefined;
    const outcome = await runHandler(
      (_, ctx) => {
        context = ctx; // kept, not read: the signal is made on first read
        return new Promise<void>(() => {});
      },
      job,
      { controller, timeoutMs: 20, onTimeout: () => controller.abort(new HandlerTimeoutError(20)) },
    );
    expect(outcome).toMatchObject({ kind: 'retry', error: expect.stringContaining('timeout') as unknown });
    expect(context!.signal.aborted).toBe(true);
    expect(context!.signal.reason).toBeInstanceOf(HandlerTimeoutError);
  });
});

describe('a handler result', () => {
  it('what a handler resolves with is its result, as JSON text; nothing is no result', async () => {
    const controller = new AbortController();
    expect(await runHandler(async () => ({ rows: 3 }), job, { controller })).toEqual({ kind: 'complete', result: '{"rows":3}' });
    expect(await runHandler(() => 'done', job, { controller })).toEqual({ kind: 'complete', result: '"done"' });
    expect(await runHandler(async () => null, job, { controller })).toEqual({ kind: 'complete', result: 'null' });
    const none = await runHandler(async () => undefined, job, { controller });
    expect(none).toEqual({ kind: 'complete' });
    expect('result' in none).toBe(false);
  });

  it('a result JSON cannot carry, or over maxResultBytes, fails the job for good, saying why, the size and the cap', async () => {
    const controller = new AbortController();
    const big = await runHandler(async () => 'x'.repeat(100), job, { controller, maxResultBytes: 64 });
    expect(big).toEqual({
      kind: 'fail',
      error: "PayloadTooLargeError (EMQTOOLARGE): the handler's result is 102 bytes of JSON, over maxResultBytes (64); failed for good: running the job again would redo its work",
    });
    const bigint = await runHandler(async () => ({ id: 10n }), job, { controller });
    expect(bigint).toMatchObject({ kind: 'fail', error: expect.stringMatching(/^PayloadError \(EMQPAYLOAD\): the handler's result is not JSON-serialisable: .*BigInt.*; failed for good/) as unknown });
    const fn = await runHandler(async () => () => 1, job, { controller });
    expect(fn).toMatchObject({ kind: 'fail', error: expect.stringContaining("the handler's result is not JSON-serialisable (function)") as unknown });
    // the default cap is 64 KiB
    expect(await runHandler(async () => 'x'.repeat(65_534), job, { controller })).toMatchObject({ kind: 'complete' });
    expect(await runHandler(async () => 'x'.repeat(65_535), job, { controller })).toMatchObject({ kind: 'fail' });
    expect(completion('x'.repeat(10), 5)).toMatchObject({ kind: 'fail', error: expect.stringContaining('12 bytes of JSON, over maxResultBytes (5)') as unknown });
  });
});

describe('context.progress', () => {
  it('hands each report to the writer the runtime gives it (Leases.progress, which checks the value)', async () => {
    const written: unknown[] = [];
    const outcome = await runHandler(
      async (_, { progress }) => {
        expect(await progress(10)).toBe(true);
        expect(await progress({ step: 'resize' })).toBe(true);
        return 'ok';
      },
      job,
      {
        controller: new AbortController(),
        progress: async (value) => {
          written.push(value);
          return true;
        },
      },
    );
    expect(outcome).toEqual({ kind: 'complete', result: '"ok"' });
    expect(written).toEqual([10, { step: 'resize' }]);
  });

  it('without a writer (no lease to write under) checks the value and writes nothing', async () => {
    const context = contextOf(new AbortController());
    expect(await context.progress(50)).toBe(false);
    await expect(context.progress(-1)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('contextOf', () => {
  it('hands out the controller’s own signal, the same one every read', () => {
    const controller = new AbortController();
    const context = contextOf(controller);
    expect(context.signal).toBe(controller.signal);
    expect(context.signal).toBe(context.signal);
    controller.abort(new Error('lease lost'));
    expect(context.signal.aborted).toBe(true);
  });
});
