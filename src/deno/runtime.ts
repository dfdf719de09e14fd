/**
 * The little of the `Deno` global the adapter uses, declared here: the package is compiled
 * against Node's types, where no `Deno` exists, so the global is read through this shape.
 */

/** Where a Deno server listens, as `Deno.serve` reports it. */
interface NetAddr {
  /** The address it is bound to ("0.0.0.0", "127.0.0.1"). */
  readonly hostname: string;
  /** The port, the one the system chose for port 0. */
  readonly port: number;
}

/** `Deno.serve`'s options the adapter passes. */
interface ServeInit {
  /** Default 8000. */
  readonly port?: number;
  /** Default "0.0.0.0". */
  readonly hostname?: string;
  /** Aborting it stops the server as `shutdown()` does. */
  readonly signal?: AbortSignal;
  /** Called once it listens (by default Deno prints "Listening on ..."). */
  readonly onListen?: (address: NetAddr) => void;
}

/** What `Deno.serve` returns. */
export interface DenoHttpServer {
  /** Where it listens: known as soon as `Deno.serve` returns. */
  readonly addr: NetAddr;
  /** Settles once the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops accepting connections; resolves once the requests in flight are answered. */
  shutdown(): Promise<void>;
}

/** The `Deno` global, as far as the adapter reads it. */
export interface DenoGlobal {
  /** Starts an HTTP server (https://docs.deno.com/api/deno/~/Deno.serve). */
  serve(options: ServeInit, handler: (request: Request) => Response | Promise<Response>): DenoHttpServer;
  /** Missing without `--unstable-cron` (or `"unstable": ["cron"]` in deno.json). */
  readonly cron?: (name: string, schedule: string, options: { readonly signal?: AbortSignal }, handler: () => Promise<void>) => Promise<void>;
  /** The process's environment: `toObject` throws without `--allow-env`. */
  readonly env: { toObject(): Record<string, string> };
  /** Listens for a signal: the process no longer ends on it by default. Throws for SIGTERM on Windows. */
  addSignalListener(signal: 'SIGTERM', handler: () => void): void;
  /** Stops listening. */
  removeSignalListener(signal: 'SIGTERM', handler: () => void): void;
  /** The platform the runtime was built for (`os`: "linux", "windows"...). */
  readonly build: { readonly os: string };
}

/** What a Deno adapter found missing: the runtime itself, `Deno.cron`, or the permission to read the environment. */
export type DenoMissing = 'Deno' | 'Deno.cron' | 'Deno.env';

/**
 * Thrown by `serveDeno` when the runtime lacks what it needs, `missing` saying what: not Deno at
 * all, `Deno.cron` without `--unstable-cron`, `Deno.env` without `--allow-env`. The message says
 * the flag or the option that fixes it.
 *
 * @example
 * try {
 *   serveDeno({ handlers });
 * } catch (error) {
 *   if (error instanceof DenoRuntimeError && error.missing === 'Deno.cron') console.error(error.message);
 * }
 */
export class DenoRuntimeError extends Error {
  /** What is missing. */
  readonly missing: DenoMissing;

  /**
   * @param message what is missing and how to get it
   * @param missing which of the three it is
   * @param cause the runtime's own error, when there was one
   */
  constructor(message: string, missing: DenoMissing, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'DenoRuntimeError';
    this.missing = missing;
  }
}

/** The `Deno` global, or a DenoRuntimeError saying this is not Deno. */
export function denoGlobal(): DenoGlobal {
  const deno = (globalThis as { Deno?: DenoGlobal }).Deno;
  if (typeof deno?.serve !== 'function') {
    throw new DenoRuntimeError('echomq/deno runs under Deno (2.x): this runtime has no Deno.serve (on Node, use echomq/node)', 'Deno');
  }
  return deno;
}

/** The process's environment, or a DenoRuntimeError naming the flag when Deno refuses to read it. */
export function denoEnv(deno: DenoGlobal): Record<string, string> {
  try {
    return deno.env.toObject();
  } catch (error) {
    // Deno throws NotCapable ("Requires env access") without --allow-env
    throw new DenoRuntimeError('serveDeno reads UPSTASH_REDIS_REST_*, EMQ_TOKEN and the EMQ_* settings from Deno.env: run with --allow-env, or pass `env`', 'Deno.env', error);
  }
}
