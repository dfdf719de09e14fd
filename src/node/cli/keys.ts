import { assertKeyName } from '../../encode.js';
import { checkRateLimit, MAX_RATE_MS, type RateLimit } from '../../queue/rate-limits.js';
import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the concurrency key commands, for `emq --help`. */
export const KEYS_USAGE = `  emq key-limit <queue> <key> <limit|none>
      At most <limit> running jobs naming concurrency key <key> (enqueue --keys); none lifts it.
      Raising or lifting it readmits as many jobs parked on the key as it has room for; lowering
      takes nothing back. Prints {"key", "limit", "readmitted"}. A partitioned queue refuses keys
      (exit 2).
  emq key-rate <queue> <key> <limit>/<periodMs>|none
      At most <limit> starts of jobs naming concurrency key <key> in any window of <periodMs> ms
      (1 to ${MAX_RATE_MS}, on Redis's clock), e.g. 100/60000; none lifts it. Raising or lifting
      it readmits as many jobs parked on the key as the window has room for. Prints {"key",
      "rate", "readmitted"} (rate null when lifted).
  emq keys <queue>
      Prints one JSON line per concurrency key, sorted by name: {"key", "limit", "running",
      "parked", "rate", "throttledUntil"} as GET /v1/queues/:queue/keys answers them (limit and
      rate null for none; throttledUntil, epoch ms on Redis's clock, while the key's rate keeps
      parked jobs waiting, else null).`;

/** `<limit|none>` as setKeyLimit takes it; anything but an integer >= 0 or `none` is a usage error. */
function limitArgument(raw: string): number | null {
  if (raw === 'none') return null;
  const limit = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(limit)) throw new UsageError(`key-limit takes a limit: an integer >= 0, or none; got ${JSON.stringify(raw)}`);
  return limit;
}

/**
 * `<limit>/<periodMs>|none` as setKeyRateLimit takes it: the shape here, the numbers by the Queue's
 * own check (checkRateLimit, in its words, as `emq rate` checks them).
 */
function rateArgument(raw: string): RateLimit | null {
  if (raw === 'none') return null;
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  if (!match) throw new UsageError(`key-rate takes a rate: <limit>/<periodMs> (e.g. 100/60000), or none; got ${JSON.stringify(raw)}`);
  return checkRateLimit({ limit: Number(match[1]), periodMs: Number(match[2]) });
}

/**
 * The concurrency key commands (`key-limit`, `key-rate`, `keys`) by name, each resolving to its
 * exit code: thin calls of `setKeyLimit`, `setKeyRateLimit` and `keyLimits`, printing what the HTTP
 * routes answer. A bad key, limit or rate is a usage error (exit 2, one line) before any
 * connection; a partitioned queue's refusal (EMQPARTITION) exits 2 as well.
 *
 * @example
 * const commands = { ...keysCommands(commandContext()) };
 * await commands['key-limit'](['reports', 'org:7', '10']); // prints {"key":"org:7","limit":10,"readmitted":0}
 * await commands['key-rate'](['reports', 'org:7', '100/60000']); // prints {"key":"org:7","rate":{"limit":100,"periodMs":60000},"readmitted":0}
 */
export function keysCommands(cli: CommandContext): Commands {
  return {
    async 'key-limit'(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      if (positionals.length !== 3) throw new UsageError('key-limit takes <queue> <key> <limit|none>');
      const [name, key, raw] = positionals as [string, string, string];
      // the Queue checks them again; here so bad input never connects
      assertKeyName(key);
      const limit = limitArgument(raw);
      const readmitted = await cli.withQueue(name, (queue) => queue.setKeyLimit(key, limit));
      printJson({ key, limit, readmitted });
      return EXIT.ok;
    },

    async 'key-rate'(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      if (positionals.length !== 3) throw new UsageError('key-rate takes <queue> <key> <limit>/<periodMs>|none');
      const [name, key, raw] = positionals as [string, string, string];
      // the Queue checks them again; here so bad input never connects
      assertKeyName(key);
      const rate = rateArgument(raw);
      const readmitted = await cli.withQueue(name, (queue) => queue.setKeyRateLimit(key, rate));
      printJson({ key, rate, readmitted });
      return EXIT.ok;
    },

    async keys(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      if (positionals.length !== 1) throw new UsageError('keys takes <queue>');
      for (const key of await cli.withQueue(positionals[0]!, (queue) => queue.keyLimits())) printJson(key);
      return EXIT.ok;
    },
  };
}
