import type { DeadRetention, FinishedState, JobState } from '../../job.js';
import { type Commands, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { intOption, parseArgs, payloadArgument, UsageError } from './strict-args.js';

/** The usage lines of the admin commands, for `emq --help`. */
export const ADMIN_USAGE = `  emq jobs <queue> <pending|scheduled|active|completed|dead|waiting|awaiting|cancelled> [--offset N] [--limit N]
      Prints one JSON line per job of that state, in its order (limit 1 to 1000, default 50).
  emq clean <queue> <completed|dead|cancelled> [--older-than-ms N] [--limit N]
      Deletes finished jobs that finished at least N ms ago (default 0: all); prints {"removed"}.
  emq drain <queue>
      Deletes the jobs waiting to run (pending and scheduled), never active ones; prints {"removed"}.
  emq obliterate <queue> [--force]
      Deletes the whole queue and its registry entry; refused (exit 2) while jobs are active,
      unless --force. Prints {"queue", "obliterated"}.
  emq reprocess-dead <queue> [--limit N]
      Sends dead jobs back to be claimed, oldest first; prints {"reprocessed"}.
  emq change-priority <queue> <id> <priority>
      Gives a waiting job (pending or scheduled) another priority (0 runs first).
  emq update-data <queue> <id> <json>
      Replaces a waiting job's payload.
  emq dead-retention <queue> [--max-age-ms N|none] [--max-count N|none]
      Prints {"maxAgeMs", "maxCount"}, the retention of dead jobs; with an option, sets it first
      (the one not given: none). Every burial then deletes at most two dead jobs past it.`;

const STATES: readonly JobState[] = ['pending', 'scheduled', 'active', 'completed', 'dead', 'waiting', 'awaiting', 'cancelled'];
/** The states `clean` deletes jobs of: those a job ends in. */
const FINISHED: readonly FinishedState[] = ['completed', 'dead', 'cancelled'];

/**
 * The admin commands (`jobs`, `clean`, `drain`, `obliterate`, `reprocess-dead`, `change-priority`,
 * `update-data`, `dead-retention`) by name, each resolving to its exit code: thin calls of the
 * Queue methods, whose bad input throws a typed error the CLI prints as a usage failure.
 *
 * @example
 * const commands = { consume, ...adminCommands(commandContext()) };
 * await commands.drain(['mail']); // prints {"removed": n}
 */
export function adminCommands(cli: CommandContext): Commands {
  /** Parses `args`, which must hold exactly `names` positionals. */
  const parse = <O extends Record<string, { type: 'string' | 'boolean' }>>(command: string, args: string[], names: readonly string[], options: O) => {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options });
    if (positionals.length !== names.length) throw new UsageError(`${command} takes ${names.map((n) => `<${n}>`).join(' ')}`);
    return { values, positionals: positionals as string[] };
  };
  /** An option of the retention: an integer, or `none` for no limit; undefined when not given. */
  const limitOrNone = (values: Record<string, unknown>, name: string): number | null | undefined =>
    values[name] === 'none' ? null : intOption(values, name);

  return {
    async jobs(args) {
      const { values, positionals } = parse('jobs', args, ['queue', 'state'], { offset: { type: 'string' }, limit: { type: 'string' } });
      const [name, state] = positionals as [string, string];
      if (!STATES.includes(state as JobState)) throw new UsageError(`jobs takes a state: ${STATES.join(', ')}; got ${JSON.stringify(state)}`);
      const offset = intOption(values, 'offset');
      const limit = intOption(values, 'limit');
      const jobs = await cli.withQueue(name, (queue) =>
        queue.getJobs(state as JobState, { ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) }),
      );
      for (const job of jobs) printJson(job);
      return 0;
    },

    async clean(args) {
      const { values, positionals } = parse('clean', args, ['queue', FINISHED.join('|')], { 'older-than-ms': { type: 'string' }, limit: { type: 'string' } });
      const [name, state] = positionals as [string, FinishedState];
      if (!FINISHED.includes(state)) throw new UsageError(`clean takes ${FINISHED.join(', ')}; got ${JSON.stringify(state)}`);
      const olderThanMs = intOption(values, 'older-than-ms');
      const limit = intOption(values, 'limit');
      const ids = await cli.withQueue(name, (queue) =>
        queue.clean(state, { ...(olderThanMs === undefined ? {} : { olderThanMs }), ...(limit === undefined ? {} : { limit }) }),
      );
      printJson({ removed: ids.length });
      return 0;
    },

    async drain(args) {
      const { positionals } = parse('drain', args, ['queue'], {});
      printJson({ removed: await cli.withQueue(positionals[0]!, (queue) => queue.drain()) });
      return 0;
    },

    async obliterate(args) {
      const { values, positionals } = parse('obliterate', args, ['queue'], { force: { type: 'boolean' } });
      const name = positionals[0]!;
      const obliterated = await cli.withQueue(name, (queue) => queue.obliterate({ force: values.force === true }));
      printJson({ queue: name, obliterated });
      return 0;
    },

    async 'reprocess-dead'(args) {
      const { values, positionals } = parse('reprocess-dead', args, ['queue'], { limit: { type: 'string' } });
      const limit = intOption(values, 'limit');
      printJson({ reprocessed: await cli.withQueue(positionals[0]!, (queue) => queue.reprocessDead(limit === undefined ? {} : { limit })) });
      return 0;
    },

    async 'change-priority'(args) {
      const { positionals } = parse('change-priority', args, ['queue', 'id', 'priority'], {});
      const [name, id, raw] = positionals as [string, string, string];
      const priority = intOption({ priority: raw }, 'priority')!;
      await cli.withQueue(name, (queue) => queue.changePriority(id, priority));
      printJson({ id: id.startsWith('JOB:') ? id : `JOB:${id}`, priority });
      return 0;
    },

    async 'update-data'(args) {
      const { positionals } = parse('update-data', args, ['queue', 'id', 'json'], {});
      const [name, id, json] = positionals as [string, string, string];
      const payload = payloadArgument(json);
      await cli.withQueue(name, (queue) => queue.updateData(id, payload));
      printJson({ id: id.startsWith('JOB:') ? id : `JOB:${id}`, updated: true });
      return 0;
    },

    async 'dead-retention'(args) {
      const { values, positionals } = parse('dead-retention', args, ['queue'], { 'max-age-ms': { type: 'string' }, 'max-count': { type: 'string' } });
      const maxAgeMs = limitOrNone(values, 'max-age-ms');
      const maxCount = limitOrNone(values, 'max-count');
      const retention: DeadRetention = await cli.withQueue(positionals[0]!, (queue) =>
        maxAgeMs === undefined && maxCount === undefined ? queue.deadRetention() : queue.setDeadRetention({ maxAgeMs: maxAgeMs ?? null, maxCount: maxCount ?? null }),
      );
      printJson(retention);
      return 0;
    },
  };
}
