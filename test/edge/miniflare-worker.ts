import { dirname } from 'node:path';
import { Miniflare } from 'miniflare';

/** What a test of the Worker under miniflare holds: the miniflare (to dispose, to get the Worker) and its base url. */
export interface MiniflareWorker {
  readonly mf: Miniflare;
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
}

/** Where a Worker under miniflare finds Redis, and what else it is bound to. */
export interface MiniflareWorkerOptions {
  /** The bundled Worker's one module (`buildWorker().path`, `buildEntryWorker(...)`). */
  readonly bundlePath: string;
  /** The REST bridge's url and token: the Worker's `UPSTASH_REDIS_REST_URL` and `_TOKEN`. */
  readonly bridgeUrl: string;
  readonly bridgeToken: string;
  /** The API's token (`EMQ_TOKEN`); left unbound when undefined, as a Worker without one runs. */
  readonly emqToken?: string;
  /** The test's own bindings, over the ones above. */
  readonly bindings?: Readonly<Record<string, string>>;
}

/**
 * A bundled Worker under miniflare (workerd) on a free loopback port, talking to Redis through
 * the REST bridge; resolves once it serves. The caller disposes `mf`.
 *
 * @example
 * const { mf, url } = await startMiniflareWorker({ bundlePath, bridgeUrl: bridge.url, bridgeToken: BRIDGE_TOKEN, emqToken: EMQ_TOKEN, bindings: { Q: name } });
 * try { await fetch(`${url}/healthz`); } finally { await mf.dispose(); }
 */
export async function startMiniflareWorker(options: MiniflareWorkerOptions): Promise<MiniflareWorker> {
  const mf = new Miniflare({
    modules: true,
    scriptPath: options.bundlePath,
    // the bundle lives in a temp dir: it is the modules' root (paths may not climb out of it)
    modulesRoot: dirname(options.bundlePath),
    compatibilityDate: '2026-04-26',
    host: '127.0.0.1',
    port: 0,
    bindings: {
      UPSTASH_REDIS_REST_URL: options.bridgeUrl,
      UPSTASH_REDIS_REST_TOKEN: options.bridgeToken,
      ...(options.emqToken === undefined ? {} : { EMQ_TOKEN: options.emqToken }),
      ...options.bindings,
    },
  });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  return { mf, url };
}
