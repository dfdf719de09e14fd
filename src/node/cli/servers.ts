import { startBridge } from '../bridge/index.js';
import { type Commands, EXIT } from './command.js';
import type { CommandContext } from './command-context.js';
import { targetName } from '../redis-target.js';
import { type ApiServer, serveApi } from './serve.js';
import { intOption, parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the serve and bridge commands, for `emq --help`. */
export const SERVERS_USAGE = `  emq serve [--port N] [--host H]
      Serves the HTTP API (the same app as the Worker's) over REDIS_URL or REDIS_CLUSTER_NODES,
      default port 8787. Requests must carry Authorization: Bearer $EMQ_TOKEN; without EMQ_TOKEN
      the API is open and listens on 127.0.0.1 only. SIGTERM or SIGINT stops it.
  emq bridge [--port N] [--host H]
      Serves an Upstash-REST-compatible API over REDIS_URL or REDIS_CLUSTER_NODES (POST /,
      /pipeline, /multi-exec; on a cluster a transaction's keys must share a slot) for
      local edge work; clients send UPSTASH_REDIS_REST_TOKEN (required in the environment) as
      their bearer token. Prints its URL; SIGTERM or SIGINT stops it. Host default 127.0.0.1.`;

/** Resolves with the first SIGTERM or SIGINT: how a server command is told to stop. */
const stopSignal = (): Promise<NodeJS.Signals> =>
  new Promise((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });

/** The options of a command that listens: `--port` (0 to 65535) and `--host`, nothing else. */
function listenOptions(command: string, args: string[]): { port: number | undefined; host: string | undefined } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { port: { type: 'string' }, host: { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`${command} takes no positional arguments`);
  const port = intOption(values, 'port');
  if (port !== undefined && (port < 0 || port > 65_535)) throw new UsageError(`--port takes 0 to 65535, got ${port}`);
  return { port, host: values.host };
}

/**
 * The commands that serve until SIGTERM or SIGINT (`serve`: the HTTP API; `bridge`: Upstash REST
 * over Redis) by name, each resolving to its exit code once stopped. Each prints its URL on
 * stdout, what it serves over on stderr.
 *
 * @example
 * const commands = { ...serverCommands(commandContext()) };
 * await commands.serve(['--port', '0']); // prints http://127.0.0.1:<port>, serves until SIGTERM
 */
export function serverCommands(cli: CommandContext): Commands {
  return {
    async serve(args) {
      const { port = 8787, host } = listenOptions('serve', args);
      const token = process.env.EMQ_TOKEN || undefined;
      const queueOptions = cli.durability();
      const transport = cli.connect();
      let api: ApiServer;
      try {
        api = await serveApi({ transport, port, queueOptions, ...(token ? { token } : {}), ...(host ? { host } : {}) });
      } catch (error) {
        // the port is taken, the host is not ours: nothing serves, so nothing stays connected
        await transport.close();
        throw error;
      }
      const redis = cli.redisTarget();
      process.stdout.write(`${api.url}\n`);
      if (api.open) {
        process.stderr.write(`[emq] no EMQ_TOKEN: the API is open, so it listens on 127.0.0.1 only (${api.url}) over ${targetName(redis)}\n`);
      } else {
        process.stderr.write(`[emq] serving the API on ${api.url} over ${targetName(redis)}, bearer token required\n`);
      }
      const signal = await stopSignal();
      process.stderr.write(`[emq] ${signal}: stopping the API\n`);
      await api.close();
      await transport.close();
      return EXIT.ok;
    },

    async bridge(args) {
      const { port, host } = listenOptions('bridge', args);
      const token = process.env.UPSTASH_REDIS_REST_TOKEN;
      if (!token) throw new UsageError('bridge needs UPSTASH_REDIS_REST_TOKEN in the environment: the token clients must send');
      const redis = cli.redisTarget();
      const running = await startBridge({ ...(redis.kind === 'url' ? { redisUrl: redis.url } : { clusterNodes: redis.nodes }), token, port, host });
      process.stdout.write(`${running.url}\n`);
      process.stderr.write(`[emq] bridge on ${running.url} over ${targetName(redis)}; SIGTERM or Ctrl-C stops\n`);
      const signal = await stopSignal();
      process.stderr.write(`[emq] ${signal}: stopping the bridge (${JSON.stringify(running.stats())})\n`);
      await running.close();
      return EXIT.ok;
    },
  };
}
