import type { Handler } from '../src/handler.js';

/** The `signup` queue's payload: who signed up, and (for a demo or a test) shorter waits than a day. */
export interface SignupPayload {
  readonly email: string;
  /** How long to wait before asking for the verification (default a day). */
  readonly sleepMs?: number;
  /** How long to wait for `email.verified` (default a day). */
  readonly verifyWithinMs?: number;
}

const DAY = 24 * 60 * 60 * 1000;

/**
 * The signup flow of docs/guides/steps.md, written as durable steps: create the account, sleep a
 * day, wait for the `email.verified` event of that account (or a day), then send a reminder or
 * finish. Each step records which runtime ran it (`runtime`): the same job may run its first
 * steps on Node and the rest in the Worker.
 */
export function signupHandler(runtime: string, log: (line: string) => void = (line) => console.log(line)): Handler<SignupPayload> {
  return async (job, { step }) => {
    const account = await step.run('create account', () => {
      log(`[${runtime}] ${job.id} creates the account of ${job.payload.email}`);
      return { userId: `user-${job.id.slice(4)}`, by: runtime };
    });
    await step.sleep('give them a day', job.payload.sleepMs ?? DAY);
    const verified = await step.waitForEvent<{ userId: string }>('email verified', {
      event: 'email.verified',
      match: { userId: account.userId },
      timeoutMs: job.payload.verifyWithinMs ?? DAY,
    });
    if (verified === null) {
      return step.run('send a reminder', () => {
        log(`[${runtime}] ${job.id} reminds ${job.payload.email} to verify`);
        return { userId: account.userId, outcome: 'reminded', by: runtime };
      });
    }
    return step.run('welcome', () => {
      log(`[${runtime}] ${job.id} welcomes ${account.userId}: verified`);
      return { userId: account.userId, outcome: 'verified', by: runtime };
    });
  };
}
