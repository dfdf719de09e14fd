import { JobCancelledError, JobFailedError, WaitTimeoutError } from '../../errors.js';
import type { DedupeOptions, EnqueueOptions } from '../../job.js';
import type { QueueSurface } from '../../queue/surface.js';
import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { intOption, parseArgs, partitionsOption, payloadArgument, UsageError } from './strict-args.js';

/** The usage lines of the enqueue command, for `emq --help`. */
export const ENQUEUE_USAGE = `  emq enqueue <queue> <json> [--group G] [--delay-ms N] [--id ID] [--priority N] [--max-attempts N]
              [--dedupe-key K [--dedupe-ttl-ms MS] [--replace]] [--timeout-ms MS] [--expire-after-ms MS] [--keys K1,K2]
              [--wait MS] [--partitions N]
      Adds one job; prints {"id", "state"}. --timeout-ms: the job's own handler timeout; --expire-after-ms: not
      started that long after the add, it never starts (dead, EMQEXPIRED); --keys: concurrency keys it
      counts against (each under its limit, emq key-limit). --partitions N makes the queue partitioned (N
      partitions, fixed for its life) with its first job, or checks the count of one that is: a
      count the registry does not hold is refused (exit 2), nothing written. --dedupe-key: while a job added with key K is unfinished
      (or for MS after it was added), this one is a duplicate of it ("duplicate", its id); with
      --replace, that job, if not started, takes this payload and delay ("replaced"). With --wait,
      waits up to MS for it to finish and prints
      {"id", "state": "completed", "result"} (exit 0), {"id", "state": "dead", "error"} (exit 1),
      or {"id", "state"} when it did not finish in time (exit 1).`;

/** `emq enqueue`'s dedupe options: --dedupe-ttl-ms and --replace only beside --dedupe-key (the key's own checks are `add`'s). */
function dedupeOption(values: Record<string, unknown>): DedupeOptions | undefined {
  const key = values['dedupe-key'];
  const ttlMs = intOption(values, 'dedupe-ttl-ms');
  const replace = values.replace === true;
  if (typeof key !== 'string') {
    if (ttlMs !== undefined || replace) throw new UsageError('--dedupe-ttl-ms and --replace go with --dedupe-key');
    return undefined;
  }
  if (ttlMs !== undefined && ttlMs < 1) throw new UsageError(`--dedupe-ttl-ms takes a whole number of ms >= 1, got ${ttlMs}`);
  return { key, ...(ttlMs === undefined ? {} : { ttlMs }), ...(replace ? { replace } : {}) };
}

/** `emq enqueue --wait`: adds, waits, prints the outcome; exit 0 only when the job completed. */
async function enqueueAndWait(queue: QueueSurface, payload: unknown, options: EnqueueOptions, waitMs: number): Promise<number> {
  let id = '';
  // --timeout-ms is the job's own timeout; --wait the wait's (addAndWait's timeoutMs)
  const { timeoutMs: jobTimeoutMs, ...jobOptions } = options;
  try {
    const done = await queue.addAndWait(payload, { ...jobOptions, ...(jobTimeoutMs === undefined ? {} : { jobTimeoutMs }), timeoutMs: waitMs, onAdded: (added) => (id = added.id) });
    printJson({ id: done.id, state: 'completed', ...(done.result === undefined ? {} : { result: done.result }) });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof JobFailedError) {
      printJson({ id, state: 'dead', error: error.jobError });
      return EXIT.failed;
    }
    if (error instanceof JobCancelledError) {
      printJson({ id, state: 'cancelled', reason: error.reason });
      return EXIT.failed;
    }
    if (!(error instanceof WaitTimeoutError)) throw error;
    printJson({ id, state: (await queue.getJob(id))?.state ?? 'removed' });
    return EXIT.failed;
  }
}

/**
 * The enqueue command by name, resolving to its exit code: a thin call of `add` (or `addAndWait`
 * with --wait), printing what `POST /v1/queues/:queue/jobs` answers.
 *
 * @example
 * const commands = { ...enqueueCommands(commandContext()) };
 * await commands.enqueue(['mail', '{"to":"ada@example.com"}']); // prints {"id", "state"}
 */
export function enqueueCommands(cli: CommandContext): Commands {
  return {
    async enqueue(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          group: { type: 'string' },
          'delay-ms': { type: 'string' },
          id: { type: 'string' },
          priority: { type: 'string' },
          'max-attempts': { type: 'string' },
          'timeout-ms': { type: 'string' },
          'expire-after-ms': { type: 'string' },
          keys: { type: 'string' },
          'dedupe-key': { type: 'string' },
          'dedupe-ttl-ms': { type: 'string' },
          replace: { type: 'boolean' },
          wait: { type: 'string' },
          partitions: { type: 'string' },
        },
      });
      const [queueName, json, ...extra] = positionals;
      if (!queueName || json === undefined || extra.length > 0) throw new UsageError('enqueue takes a queue name and one JSON payload');
      const payload = payloadArgument(json);
      const delayMs = intOption(values, 'delay-ms');
      const priority = intOption(values, 'priority');
      const maxAttempts = intOption(values, 'max-attempts');
      const timeoutMs = intOption(values, 'timeout-ms');
      const expireAfterMs = intOption(values, 'expire-after-ms');
      const wait = intOption(values, 'wait');
      const partitions = partitionsOption(values);
      if (wait !== undefined && wait < 0) throw new UsageError(`--wait takes a whole number of ms >= 0, got ${wait}`);
      const dedupe = dedupeOption(values);
      const options: EnqueueOptions = {
        ...(values.group === undefined ? {} : { group: values.group }),
        ...(values.id === undefined ? {} : { id: values.id }),
        ...(delayMs === undefined ? {} : { delayMs }),
        ...(priority === undefined ? {} : { priority }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(expireAfterMs === undefined ? {} : { expireAfterMs }),
        ...(values.keys === undefined ? {} : { keys: values.keys.split(',') }),
        ...(dedupe === undefined ? {} : { dedupe }),
      };
      const durability = cli.durability();
      // --partitions makes (or checks) a partitioned queue: a count the registry does not hold is EMQPARTITION, nothing written
      return cli.withQueue(
        queueName,
        async (queue) => {
          if (wait !== undefined) return enqueueAndWait(queue, payload, options, wait);
          printJson(await queue.add(payload, options));
          return EXIT.ok;
        },
        { durability, partitions },
      );
    },
  };
}
