/**
 * The consumers' half of fuzz-options: `new Consumer`, `new BatchConsumer` and `Consumer.connect`
 * with generated queues, handlers and options (src/node/consumer/options.ts and each class's own).
 */
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { EmqError } from '../../../src/errors.js';
import { BatchConsumer, Consumer } from '../../../src/node/consumer/index.js';
import type { ConsumerHooks } from '../../../src/node/consumer/hooks.js';
import type { IoredisTransport } from '../../../src/node/ioredis-transport.js';
import { Queue } from '../../../src/queue/queue.js';
import { checkInvariants } from '../../../test/invariants.js';
import { activeHandles, CONNECTIONS, handlesLeftOver } from '../../lib/active-handles.js';
import { describeError, type FuzzTally, shortText, within } from '../../lib/fuzz-tally.js';
import { badName, validOr, wrongValue } from '../../lib/fuzz-values.js';

const QUEUE = 'fz-consumer';
/** How long an accepted consumer runs: long enough for its first beat to claim and settle a job. */
const RUN_MS = 150;

/** Hooks that record what the consumer reports; a run fills in its own. */
const HOOKS = '<hooks>';

const consumerCase = fc.record({
  kind: fc.constantFrom('Consumer', 'BatchConsumer', 'Consumer.connect'),
  queue: fc.oneof({ arbitrary: fc.constant(QUEUE), weight: 8 }, { arbitrary: badName, weight: 1 }, { arbitrary: wrongValue, weight: 1 }),
  handler: fc.oneof({ arbitrary: fc.constant('<handler>'), weight: 10 }, { arbitrary: wrongValue, weight: 1 }),
  options: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 1 },
    {
      arbitrary: fc.record(
        {
          leaseMs: validOr(fc.integer({ min: 1_000, max: 60_000 })),
          beatMs: validOr(fc.integer({ min: 50, max: 5_000 })),
          timeoutMs: validOr(fc.integer({ min: 0, max: 10_000 })),
          renewMs: validOr(fc.integer({ min: 100, max: 10_000 })),
          stopTimeoutMs: validOr(fc.integer({ min: 0, max: 2_000 })),
          prefetch: validOr(fc.oneof(fc.constant('auto'), fc.integer({ min: 0, max: 10 }))),
          concurrency: validOr(fc.integer({ min: 1, max: 4 })),
          batchSize: validOr(fc.integer({ min: 1, max: 20 })),
          hooks: validOr(fc.constant(HOOKS), 8),
          queue: validOr(fc.record({ keepCompletedMs: fc.constantFrom(-1, 0, 60_000) }, { requiredKeys: [] })),
          unknownKey: wrongValue,
        },
        { requiredKeys: ['hooks'] },
      ),
      weight: 8,
    },
    { arbitrary: wrongValue, weight: 1 },
  ),
});

/** What the Consumer fuzzer needs: its database, a transport to it and its URL (Consumer.connect). */
export interface ConsumerFuzzContext {
  readonly raw: Redis;
  readonly transport: IoredisTransport;
  readonly url: string;
  readonly runs: number;
  readonly seed: number;
  readonly tally: FuzzTally;
}

/**
 * Runs `runs` generated consumer constructions. Promises checked: bad options throw an EmqError
 * with a code, at once, and leave no socket or timer behind; accepted ones start, run a job
 * without the loop reporting an error while Redis is up (an option the scripts then refuse is a
 * bad option accepted), stop within 5 s, and leave the process's handles as they found them and
 * the queue's invariants clean.
 */
export async function fuzzConsumerOptions(ctx: ConsumerFuzzContext): Promise<void> {
  const { raw, transport, tally } = ctx;
  const producer = new Queue(transport, QUEUE);
  await fc.assert(
    fc.asyncProperty(consumerCase, async (c) => {
      tally.ran('consumer_options');
      const reported: string[] = [];
      const hooks: ConsumerHooks<unknown> = {
        onError: (error) => reported.push(`onError ${describeError(error)}`),
        onRetried: (_job, { error }) => reported.push(`onRetried ${error.split('\n')[0]}`),
        onDead: (_job, { error }) => reported.push(`onDead ${error.split('\n')[0]}`),
      };
      const hooked = typeof c.options === 'object' && c.options !== null && 'hooks' in c.options && c.options.hooks === HOOKS ? { ...c.options, hooks } : c.options;
      // a plain options object without a log of its own logs nowhere: a "connected" line per case is noise
      const options = typeof hooked === 'object' && hooked !== null && Object.getPrototypeOf(hooked) === Object.prototype && !('log' in hooked) ? { ...hooked, log: false } : hooked;
      const handler = c.handler === '<handler>' ? async (): Promise<void> => {} : c.handler;
      const shown = `${c.kind}(${shortText(c.queue)}, ${shortText(c.handler)}, ${shortText(c.options)})`;
      await producer.add({ n: 1 });
      const before = activeHandles(CONNECTIONS);
      let consumer: Consumer | BatchConsumer | undefined;
      try {
        const queue = typeof c.queue === 'string' && c.queue === QUEUE && c.kind !== 'Consumer.connect' ? producer : c.queue;
        if (c.kind === 'Consumer') consumer = new Consumer(transport, queue as Queue, handler as never, options as never);
        else if (c.kind === 'BatchConsumer') consumer = new BatchConsumer(transport, queue as Queue, handler as never, options as never);
        else consumer = Consumer.connect(ctx.url, queue as string, handler as never, options as never);
      } catch (error) {
        if (error instanceof EmqError) tally.refused(error.code);
        else tally.broke('server_errors', `${shown} threw ${describeError(error)}`);
        const left = await handlesLeftOver(before, CONNECTIONS);
        if (left !== '') tally.broke('handles_leaked', `${shown} refused, left ${left}`);
        return;
      }
      const started = consumer.start();
      await new Promise((resolve) => setTimeout(resolve, RUN_MS));
      const stopped = await within(5_000, () => started.stop(1_000));
      if (stopped.kind === 'hung') tally.broke('hangs', `${shown}: stop() took over 5 s`);
      else if (stopped.kind === 'threw') tally.broke('server_errors', `${shown}: stop() threw ${describeError(stopped.error)}`);
      // a job's handler resolves at once: any retry (a timeout that fired early), death or loop error is the options' fault
      if (reported.length > 0) tally.broke('server_errors', `${shown} accepted, then ${reported[0]}`);
      const left = await handlesLeftOver(before, CONNECTIONS);
      if (left !== '') tally.broke('handles_leaked', `${shown} stopped, left ${left}`);
      const violations = await checkInvariants(raw, QUEUE);
      if (violations.length > 0) tally.broke('invariant_violations', `after ${shown}: ${violations.join('; ')}`);
    }),
    { numRuns: ctx.runs, seed: ctx.seed },
  );
  // the jobs no accepted consumer took: the next run starts from an empty queue
  const left = await raw.keys(`emq:{${QUEUE}}:*`);
  if (left.length > 0) await raw.del(...left);
}
