import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EmqError } from '../../errors.js';
import type { Handler } from '../../handler.js';
import type { QueueSurface } from '../../queue/surface.js';
import { Queue } from '../../queue/queue.js';
import { Consumer } from '../consumer/index.js';
import { type Commands, EXIT } from './command.js';
import { type CommandContext, queueByName } from './command-context.js';
import { intOption, parseArgs, partitionsOption, UsageError } from './strict-args.js';

/** The usage lines of the consume command, for `emq --help`. */
export const CONSUME_USAGE = `  emq consume <queue> --handler <module> [--concurrency N] [--lease-ms N] [--beat-ms N] [--timeout-ms N] [--partitions N] [--quiet]
      Runs the parked consumer; over a partitioned queue (the registry's count, or --partitions N),
      one consumer over every partition, --concurrency slots in all. The module's default export is async (job) => void, where job is
      {id, payload, attempt, maxAttempts, group} (attempt: 1 on the first try); a throw retries
      the job. SIGTERM or SIGINT stops it at the settle point (jobs in hand may finish for
      --stop-timeout-ms, default 10000).`;

/** The default export of handler module `module` (a path from the working directory). */
async function loadHandler(module: string): Promise<Handler> {
  const url = pathToFileURL(resolve(process.cwd(), module)).href;
  let loaded: { default?: unknown };
  try {
    loaded = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw new Error(`cannot load handler module ${module}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (typeof loaded.default !== 'function') {
    throw new Error(`handler module ${module} has no default export function`);
  }
  return loaded.default as Handler;
}

/** Resolves once the consumer has stopped at the first SIGTERM or SIGINT; a second one exits at once. */
function stoppedBySignal(consumer: Consumer, log: (line: string) => void): Promise<void> {
  return new Promise<void>((done) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log(`${signal} again: exiting now`);
        process.exit(EXIT.failed);
      }
      stopping = true;
      log(`${signal}: stopping at the settle point`);
      void consumer.stop().then(done);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * The consume command by name, resolving to its exit code once a signal has stopped it: a
 * Consumer over the queue (every partition of a partitioned one), its hooks printed on stderr.
 *
 * @example
 * const commands = { ...consumeCommands(commandContext()) };
 * await commands.consume(['mail', '--handler', './send-mail.js']); // runs until SIGTERM
 */
export function consumeCommands(cli: CommandContext): Commands {
  return {
    async consume(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          handler: { type: 'string' },
          concurrency: { type: 'string' },
          'lease-ms': { type: 'string' },
          'beat-ms': { type: 'string' },
          'timeout-ms': { type: 'string' },
          'stop-timeout-ms': { type: 'string' },
          partitions: { type: 'string' },
          quiet: { type: 'boolean' },
        },
      });
      const [queueName, ...extra] = positionals;
      if (!queueName || extra.length > 0) throw new UsageError('consume takes one queue name');
      if (!values.handler) throw new UsageError('consume needs --handler <module>');
      const partitions = partitionsOption(values);
      const settings = {
        concurrency: intOption(values, 'concurrency') ?? 1,
        leaseMs: intOption(values, 'lease-ms') ?? 30_000,
        beatMs: intOption(values, 'beat-ms') ?? 5_000,
        timeoutMs: intOption(values, 'timeout-ms') ?? 0,
        stopTimeoutMs: intOption(values, 'stop-timeout-ms') ?? 10_000,
      };
      const say = (line: string): void => void process.stderr.write(`[emq] ${line}\n`);
      const log = values.quiet ? () => {} : say;
      // The order of the refusals: a bad queue name or option (exit 2) before a handler module that
      // cannot be loaded (exit 1), before a Redis it cannot reach at start (exit 1, one line). Once
      // started, the connection reconnects for ever: Redis going away is backed off and told once.
      const transport = cli.connect();
      let consumer: Consumer;
      let over = '';
      try {
        let handler: Handler | undefined;
        const consumerOn = (queue: QueueSurface<unknown>): Consumer => new Consumer(transport, queue, (job, context) => handler!(job, context), {
          ...settings,
          ownsTransport: true,
          // connected, lost (with the cause), back: one line each, --quiet or not
          log: say,
          hooks: {
            onCompleted: (job, { durationMs }) => log(`completed ${job.id} in ${durationMs.toFixed(1)} ms`),
            onRetried: (job, { error, outcome }) => log(`retry ${job.id} (${outcome}): ${error.split('\n')[0]}`),
            onDead: (job, { error }) => log(`dead ${job.id}: ${error.split('\n')[0]}`),
            onFenced: (job) => log(`lost the lease of ${job.id}: its result was not recorded`),
            // Redis trouble is told by the lines above, once, not once per retry
            onError: (error) => {
              if (!(error instanceof EmqError && error.code === 'EMQREDIS')) log(`error: ${(error as Error).message}`);
            },
          },
        });
        // options and the name are checked (exit 2) before the handler module is loaded and Redis read
        consumer = consumerOn(new Queue(transport, queueName, cli.durability()));
        handler = await loadHandler(values.handler);
        await cli.reachable(() => transport.ping());
        // a partitioned queue by its name (the registry's count), or as --partitions says: one
        // consumer over every partition
        const queue = await cli.reachable(() => queueByName(transport, queueName, { durability: cli.durability(), partitions }));
        consumer = consumerOn(queue);
        if (queue.parts.some((part) => part.name !== queue.name)) over = `, its ${queue.partitions} partitions`;
      } catch (error) {
        // Redis away, a bad queue name or option: the connection must not outlive the refusal
        // (main() may run in a longer-lived process)
        await transport.close();
        throw error;
      }
      consumer.start();
      log(`consuming ${queueName} (concurrency ${consumer.concurrency}${over}); SIGTERM or Ctrl-C stops`);
      await stoppedBySignal(consumer, log);
      log('stopped');
      return EXIT.ok;
    },
  };
}
