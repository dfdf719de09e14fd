import { describe, expect, it } from 'vitest';
import { contextOf, HandlerTimeoutError, runHandler, UnrecoverableError, type HandlerContext } from './handler.js';
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
