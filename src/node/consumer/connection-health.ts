import { performance } from 'node:perf_hooks';
import { EmqError } from '../../errors.js';
import type { ConsumerHooks } from './hooks.js';

/** What the consumer last knew of Redis: nothing yet, unreachable from the start, answering, or lost. */
type Health = 'new' | 'unreachable' | 'up' | 'lost';

/**
 * How a parked consumer's connection to Redis goes, told as it changes: connected, cannot
 * connect, lost (with the cause), back; one line each, never one per retry, whatever keeps
 * failing meanwhile (claims, settles, renewals, the park). Its only input is the loop's own
 * requests: a reply (succeeded) and an EmqError reported to onError (failed), so it works over
 * any transport. Errors that are not Redis's (a handler runner's bug) change nothing.
 *
 * @example
 * const health = new ConnectionHealth((line) => console.error(`[emq] ${line}`), transport.endpoint, 'mail');
 * const hooks = health.watching(options.hooks);
 * // ... on each reply: health.succeeded()
 */
export class ConnectionHealth {
  private health: Health = 'new';
  /** When it went down (performance.now() ms), to say for how long. */
  private downSince = 0;
  private readonly endpoint: string;

  constructor(
    private readonly log: (line: string) => void,
    endpoint: string | undefined,
    private readonly queue: string,
  ) {
    this.endpoint = endpoint ?? 'Redis';
  }

  /** A request of the loop's came back. */
  succeeded(): void {
    const was = this.health;
    if (was === 'up') return;
    this.health = 'up';
    if (was === 'new') this.say(`connected to ${this.endpoint}`);
    else if (was === 'unreachable') this.say(`connected to ${this.endpoint} after ${this.downFor()}`);
    else this.say(`${this.endpoint} is back after ${this.downFor()}`);
  }

  /** A request failed: `error` as reported to onError. */
  failed(error: unknown): void {
    if (!(error instanceof EmqError) || this.health === 'unreachable' || this.health === 'lost') return;
    const message = error.message.split('\n')[0]!;
    this.downSince = performance.now();
    if (this.health === 'new') {
      this.health = 'unreachable';
      this.say(`${message}; retrying until it answers`);
    } else {
      this.health = 'lost';
      this.say(`lost ${this.endpoint}: ${message}; retrying until it answers`);
    }
  }

  /** `hooks` with onError also telling this of the failure (before the user's hook). */
  watching<Payload>(hooks: ConsumerHooks<Payload>): ConsumerHooks<Payload> {
    const theirs = hooks.onError;
    return {
      ...hooks,
      onError: (error) => {
        this.failed(error);
        theirs?.call(hooks, error);
      },
    };
  }

  private downFor(): string {
    return `${((performance.now() - this.downSince) / 1000).toFixed(1)} s`;
  }

  private say(line: string): void {
    try {
      this.log(`consumer of ${this.queue}: ${line}`);
    } catch {
      // a log that throws must never stop the loop
    }
  }
}
