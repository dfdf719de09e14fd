import { type BeatHost, type BeatHostOptions, createBeatHost, type Platform, type ScheduledReport } from '../serverless/host.js';
import type { ServerlessEnv } from '../serverless/settings.js';
import { UpstashTransport, type UpstashEnv } from '../serverless/upstash-transport.js';
import { sleep } from '../timers.js';
import type { Transport } from '../transport.js';
import { type DenoGlobal, type DenoHttpServer, DenoRuntimeError, denoEnv, denoGlobal } from './runtime.js';

/** The environment variables the Deno adapter reads: where Redis is, and the EMQ_* settings. */
export interface DenoEnv extends ServerlessEnv, UpstashEnv {
  /** Redis over TCP, for a `connect` of yours to read (ServeDenoOptions.connect): the adapter itself never does. */
  readonly REDIS_URL?: string;
  /** The port to listen on when the `port` option is not given (container platforms set it). */
  readonly PORT?: string;
}

/** Where the server listens, as `onListen` is told. */
export interface DenoListenAddress {
  /** The address it is bound to ("0.0.0.0", "127.0.0.1"). */
  readonly hostname: string;
  /** The port, the one the system chose for port 0. */
  readonly port: number;
}

/** Options of `serveDeno`: the host's, where Redis is, the cron, the server, the shutdown. */
export interface ServeDenoOptions<Payloads = Record<string, unknown>> extends BeatHostOptions<Payloads> {
  /** Where UPSTASH_REDIS_REST_*, EMQ_TOKEN and the EMQ_* settings are read (default `Deno.env.toObject()`, which needs `--allow-env`). */
  readonly env?: DenoEnv;
  /**
   * The transport to Redis, made once from `env` (default `UpstashTransport.fromEnv(env)`, Redis
   * over REST). For Redis over TCP pass `(env) => IoredisTransport.connect(env.REDIS_URL!)` from
   * `echomq/node` (Deno's Node compatibility runs it). Closed by `close()`.
   */
  readonly connect?: (env: DenoEnv) => Transport;
  /**
   * When `Deno.cron` fires a beat, a five-field cron expression in UTC (default `* * * * *`, every
   * minute: the finest Deno.cron has), or `false` for no cron (beats only by `beat()`).
   */
  readonly schedule?: string | false;
  /** The cron's name, unique in the process: Deno.cron refuses a second of one name (default `echomq beat`). */
  readonly cronName?: string;
  /**
   * Whether to start `Deno.serve` (default true). `false` returns the handle without a server:
   * mount its `fetch` in a `Deno.serve` or framework of your own.
   */
  readonly listen?: boolean;
  /** The port (default PORT from `env`, else Deno's 8000; Deno Deploy picks its own). */
  readonly port?: number;
  /** The address to listen on (default Deno's, 0.0.0.0). */
  readonly hostname?: string;
  /** Aborting it closes the handle, as `close()` does. */
  readonly signal?: AbortSignal;
  /** Called once the server listens (default: a `listening` line in the log, with the URL). */
  readonly onListen?: (address: DenoListenAddress) => void;
  /**
   * Whether SIGTERM closes the handle (default: when it listens, and not on Windows, where Deno
   * cannot listen for SIGTERM). Off, close it yourself: a SIGTERM then ends the process at once.
   */
  readonly closeOnSigterm?: boolean;
  /**
   * How long closing waits for the drains and beats in flight, in ms (default 8,000: under the
   * 10 s `docker stop` leaves before its SIGKILL).
   */
  readonly closeWithinMs?: number;
}

/** What `serveDeno` returns: the server's address, its handler, a beat by hand, and its shutdown. */
export interface EchomqDenoServer {
  /** Where the server listens (`http://127.0.0.1:8000`), or undefined with `listen: false`. */
  readonly url: string | undefined;
  /** The port it listens on, or undefined with `listen: false`. */
  readonly port: number | undefined;
  /**
   * The HTTP API (the same app as `emq serve`): what the server answers with, for your own server
   * with `listen: false`. A drain after an enqueue goes on after the answer, awaited by `close()`.
   * Once closing, it answers 503 (EMQREDIS, `Retry-After: 1`).
   */
  fetch(request: Request): Promise<Response>;
  /**
   * A beat now, as the cron's: bounded beats of every queue with a handler until the deadline
   * (EMQ_BEAT_DEADLINE_MS, 50 s). What it did, or undefined when it failed (its log line says
   * why) or the handle is closing.
   */
  beat(): Promise<ScheduledReport | undefined>;
  /**
   * Stops the cron and the server (the requests in flight are answered), waits for the drains
   * and beats in flight (at most `closeWithinMs`), then closes the transport. Resolves once done;
   * called again, the same promise.
   */
  close(): Promise<void>;
  /** Settles once the handle is closed: by `close()`, the `signal`, or SIGTERM. */
  readonly closed: Promise<void>;
  /** The host beneath: its hono app, for tests and composition. */
  readonly host: BeatHost<DenoEnv>;
}

/** The default of `closeWithinMs`. */
const CLOSE_WITHIN_MS = 8_000;
/** How long closing waits for the transport's own close (a QUIT on a TCP connection), in ms. */
const TRANSPORT_CLOSE_MS = 1_000;

/**
 * Deno as a platform of the serverless core: Redis over REST from the environment unless the
 * caller connects otherwise, every transport made kept in `opened` for the shutdown. A Deno
 * process is not frozen after an answer (self-hosted, or a Deploy instance while it runs), so the
 * Worker's defaults hold: the drain after an enqueue runs after the answer, completions ride.
 */
function denoPlatform(connect: ((env: DenoEnv) => Transport) | undefined, opened: Set<Transport>): Platform<DenoEnv> {
  return {
    label: 'Deno app',
    secretHint: 'the app\'s environment variables (`EMQ_TOKEN`: in Deno Deploy\'s settings, or the process\'s environment)',
    connect: (env) => {
      const transport = connect ? connect(env) : UpstashTransport.fromEnv(env);
      opened.add(transport);
      return transport;
    },
    settingsOf: (env) => env,
    refuse: (env) =>
      connect || (env.UPSTASH_REDIS_REST_URL && env.UPSTASH_REDIS_REST_TOKEN)
        ? undefined
        : 'the Deno app has no UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: set them in its environment, or pass `connect`',
  };
}

/** A URL for `address`, an IPv6 one bracketed. */
const urlOf = (address: DenoListenAddress): string => `http://${address.hostname.includes(':') ? `[${address.hostname}]` : address.hostname}:${address.port}`;

/** The answer of a handle that is closing: the client tries again, elsewhere or later. */
const closingAnswer = (): Response =>
  new Response(JSON.stringify({ error: { code: 'EMQREDIS', message: 'this echomq server is shutting down: try again' } }), {
    status: 503,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
  });

/**
 * The Deno adapter, for Deno Deploy and self-hosted Deno: registers `Deno.cron(cronName,
 * schedule)` (every minute by default) whose beats drain every queue with a handler until the
 * deadline (EMQ_BEAT_DEADLINE_MS, 50 s: inside the minute), then starts `Deno.serve` with the
 * HTTP API (unless `listen: false`). After an enqueue through the API a short drain runs on after
 * the answer, so a job need not wait for the next minute: Deno.serve has no per-request
 * `waitUntil`, but a Deno process runs what is pending, so the handle keeps the drains and awaits
 * them when it closes (on `close()`, the `signal`, or SIGTERM). Call it at the module's top level:
 * Deno Deploy finds a cron by running the module's top level, before the server starts.
 *
 * Needs `--unstable-cron` (unless `schedule: false`), `--allow-net`, and `--allow-env` (unless
 * `env` is given); Deno Deploy grants them all. Redis is reached over REST
 * (UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN), or through `connect`.
 *
 * @throws DenoRuntimeError when not under Deno, when Deno.cron is missing (no
 * `--unstable-cron`), or when the environment cannot be read (no `--allow-env`, no `env`)
 * @example
 * // main.ts: deno run --allow-net --allow-env --unstable-cron main.ts
 * import { serveDeno } from 'echomq/deno';
 * serveDeno<{ mail: { to: string } }>({
 *   handlers: { mail: async (job) => { await sendMail(job.payload.to); } },
 * });
 */
export function serveDeno<Payloads extends { [Name in keyof Payloads]: unknown } = Record<string, unknown>>(
  options: ServeDenoOptions<Payloads>,
): EchomqDenoServer {
  const deno: DenoGlobal = denoGlobal();
  const log = options.log ?? ((entry: Record<string, unknown>) => console.log(JSON.stringify(entry)));
  // one env object for the process: the host keeps its transport and what it knows per env object
  const env: DenoEnv = options.env ?? denoEnv(deno);
  const opened = new Set<Transport>();
  const host = createBeatHost<DenoEnv, Payloads>({ ...options, log }, denoPlatform(options.connect, opened));
  const listen = options.listen ?? true;
  const schedule = options.schedule ?? '* * * * *';

  /** The drains after enqueues and the beats in flight, each settled promise gone from the set. */
  const pending = new Set<Promise<unknown>>();
  const keep = (promise: Promise<unknown>): void => {
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    pending.add(settled);
    void settled.then(() => pending.delete(settled));
  };
  let closing: Promise<void> | undefined;
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (markClosed = resolve));

  const beat = (trigger: string): Promise<ScheduledReport | undefined> => {
    if (closing) return Promise.resolve(undefined);
    const run = host.scheduled(env, { trigger });
    keep(run);
    return run;
  };
  const fetch = (request: Request): Promise<Response> =>
    closing ? Promise.resolve(closingAnswer()) : host.fetch(request, env, { waitUntil: keep });

  // the cron before the server: Deno Deploy reads the crons from the module's top level, and
  // one registered after Deno.serve starts is not picked up (docs.deno.com/deploy/reference/cron)
  const cronStop = new AbortController();
  if (schedule !== false) {
    if (typeof deno.cron !== 'function') {
      throw new DenoRuntimeError('Deno.cron is missing: run with --unstable-cron (or "unstable": ["cron"] in deno.json), or pass schedule: false', 'Deno.cron');
    }
    // the handler's promise is the beat's: Deno.cron skips a firing while the last still runs
    const cronName = options.cronName ?? 'echomq beat';
    deno
      .cron(cronName, schedule, { signal: cronStop.signal }, async () => {
        await beat(schedule);
      })
      .catch((error: unknown) => log({ level: 'error', msg: 'the cron stopped', cron: cronName, error: String(error) }));
  }

  let server: DenoHttpServer | undefined;
  if (listen) {
    const port = options.port ?? (env.PORT ? Number(env.PORT) : undefined);
    const onListen = options.onListen ?? ((address: DenoListenAddress) => log({ msg: 'listening', url: urlOf(address) }));
    try {
      server = deno.serve(
        { ...(port === undefined ? {} : { port }), ...(options.hostname === undefined ? {} : { hostname: options.hostname }), onListen },
        (request) => fetch(request),
      );
    } catch (error) {
      // the port taken, say: the cron must not run on in a process that is not serving
      cronStop.abort();
      throw error;
    }
  }

  const onSigterm = (): void => void close();
  const closeOnSigterm = (options.closeOnSigterm ?? listen) && deno.build.os !== 'windows';
  // with a listener, SIGTERM no longer ends the process: close() removes it, and the process then
  // ends once nothing else of the program holds it
  if (closeOnSigterm) deno.addSignalListener('SIGTERM', onSigterm);

  const close = (): Promise<void> =>
    (closing ??= (async () => {
      const endAt = Date.now() + (options.closeWithinMs ?? CLOSE_WITHIN_MS);
      if (closeOnSigterm) deno.removeSignalListener('SIGTERM', onSigterm);
      cronStop.abort();
      const timeUp = new AbortController();
      const within = (promise: Promise<unknown>): Promise<unknown> => Promise.race([promise, sleep(Math.max(0, endAt - Date.now()), { signal: timeUp.signal })]);
      try {
        // stops accepting; the requests in flight are answered (a drain they start joins `pending`)
        if (server) await within(server.shutdown());
        // a drain may start another (a flow's parent released): wait until none is left, or the time is up
        while (pending.size > 0 && Date.now() < endAt) await within(Promise.allSettled([...pending]));
        if (pending.size > 0) log({ level: 'warn', msg: 'closing with work in flight', pending: pending.size, closeWithinMs: options.closeWithinMs ?? CLOSE_WITHIN_MS });
        // what a job still running holds comes back once its lease lapses: the next beat reaps it
        await Promise.race([Promise.allSettled([...opened].map((t) => t.close())), sleep(TRANSPORT_CLOSE_MS, { signal: timeUp.signal })]);
      } finally {
        timeUp.abort();
        markClosed();
      }
    })());

  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener('abort', () => void close(), { once: true });

  return {
    url: server ? urlOf(server.addr) : undefined,
    port: server?.addr.port,
    fetch,
    beat: () => beat('beat()'),
    close,
    closed,
    host,
  };
}
