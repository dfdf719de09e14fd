import type { SchedulerSpec } from '../../schedulers/schedulers.js';
import { type Commands, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { intOption, parseArgs, payloadArgument, UsageError } from './strict-args.js';

/** The usage lines of the scheduler commands, for `emq --help`. */
export const SCHEDULE_USAGE = `  emq schedule <queue> <id> (--cron EXPR [--tz TZ] | --every MS) <json> [--group G] [--priority N]
               [--max-attempts N] [--start-at T] [--end-at T] [--limit N]
      Makes scheduler <id>, or changes it in place: the job with payload <json> is enqueued once
      per slot, as JOB:<id>@<slot>. --cron: five fields, or six with seconds first, read in --tz
      (an IANA zone, default UTC); --every: ms, at least 100. --start-at and --end-at: epoch ms or
      ISO 8601; --limit: the most slots fired in all. Prints {"id", "nextRunAt"}.
  emq schedules <queue>
      Prints one JSON line per scheduler (spec, job, nextRunAt, lastRunAt, fired), soonest first.
  emq unschedule <queue> <id>
      Removes the scheduler (the jobs it fired stay); prints {"id", "removed": true}. Exit 2 when
      there is none.`;

/**
 * The scheduler commands (`schedule`, `schedules`, `unschedule`) by name, each resolving to its
 * exit code: thin calls of `upsertScheduler`, `listSchedulers` and `removeScheduler`. Bad input
 * is a usage error (exit 2, one line) before any write: what the options cannot say, the Queue
 * checks first (a cron pattern croner refuses, an unknown time zone...).
 *
 * @example
 * const commands = { ...scheduleCommands(commandContext()) };
 * await commands.schedule(['mail', 'digest', '--cron', '0 8 * * 1-5', '{"kind":"digest"}']); // prints {"id", "nextRunAt"}
 */
export function scheduleCommands(cli: CommandContext): Commands {
  /** An instant option: epoch ms, or text Date.parse reads (ISO 8601); undefined when not given. */
  const instantOption = (values: Record<string, unknown>, name: string): number | undefined => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const ms = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Date.parse(String(raw));
    if (!Number.isSafeInteger(ms) || ms < 0) throw new UsageError(`--${name} takes epoch ms or ISO 8601 text, got ${JSON.stringify(raw)}`);
    return ms;
  };

  return {
    async schedule(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          cron: { type: 'string' },
          tz: { type: 'string' },
          every: { type: 'string' },
          group: { type: 'string' },
          priority: { type: 'string' },
          'max-attempts': { type: 'string' },
          'start-at': { type: 'string' },
          'end-at': { type: 'string' },
          limit: { type: 'string' },
        },
      });
      if (positionals.length !== 3) throw new UsageError('schedule takes <queue> <id> <json>, with --cron EXPR or --every MS');
      const [name, id, json] = positionals as [string, string, string];
      if ((values.cron === undefined) === (values.every === undefined)) throw new UsageError('schedule takes --cron EXPR or --every MS: one of them');
      const payload = payloadArgument(json);
      const every = intOption(values, 'every');
      const startAt = instantOption(values, 'start-at');
      const endAt = instantOption(values, 'end-at');
      const limit = intOption(values, 'limit');
      const priority = intOption(values, 'priority');
      const maxAttempts = intOption(values, 'max-attempts');
      const spec: SchedulerSpec = {
        ...(values.cron === undefined ? {} : { cron: values.cron }),
        ...(values.tz === undefined ? {} : { tz: values.tz }),
        ...(every === undefined ? {} : { every }),
        ...(startAt === undefined ? {} : { startAt }),
        ...(endAt === undefined ? {} : { endAt }),
        ...(limit === undefined ? {} : { limit }),
      };
      const job = {
        payload,
        ...(values.group === undefined ? {} : { group: values.group }),
        ...(priority === undefined ? {} : { priority }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
      };
      printJson(await cli.withQueue(name, (queue) => queue.upsertScheduler(id, spec, job)));
      return 0;
    },

    async schedules(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      if (positionals.length !== 1) throw new UsageError('schedules takes <queue>');
      for (const scheduler of await cli.withQueue(positionals[0]!, (queue) => queue.listSchedulers())) printJson(scheduler);
      return 0;
    },

    async unschedule(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      if (positionals.length !== 2) throw new UsageError('unschedule takes <queue> <id>');
      const [name, id] = positionals as [string, string];
      if (!(await cli.withQueue(name, (queue) => queue.removeScheduler(id)))) {
        // a refusal, like a job not in the state asked: one line, exit 2
        process.stderr.write(`emq unschedule: no scheduler ${id} in queue ${name}\n`);
        return 2;
      }
      printJson({ id, removed: true });
      return 0;
    },
  };
}
