import { randomBytes } from 'node:crypto';
import { serveApi } from '../../src/node/cli/serve.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { startMiniflareWorker } from '../edge/miniflare-worker.js';
import { buildWorker } from '../edge/worker-bundle.js';

/** The two places the dashboard is served from. */
export type TargetKind = 'node' | 'worker';

/** A running API (and its dashboard at `/ui`) for the browser to open. */
export interface Target {
  readonly kind: TargetKind;
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** The bearer token it requires; undefined when it is open. */
  readonly token: string | undefined;
  /** Stops it (and what it started: its transport, its bridge). */
  close(): Promise<void>;
}

/** With `token: undefined`, the open API the rules allow: Node on loopback, the Worker with EMQ_LOCAL_DEV=1. */
export interface TargetOptions {
  readonly redisUrl: string;
  readonly token: string | undefined;
}

const quiet = (): void => {};

/** `emq serve` in-process (`serveApi`, as the CLI runs it) over the test Redis, on a free port. */
export async function startNodeTarget({ redisUrl, token }: TargetOptions): Promise<Target> {
  const transport = IoredisTransport.connect(redisUrl);
  const api = await serveApi({ transport, port: 0, log: quiet, ...(token === undefined ? {} : { token }) });
  return {
    kind: 'node',
    url: api.url,
    token,
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
}

let bundle: ReturnType<typeof buildWorker> | undefined;

/**
 * The shipped Worker (`wrangler deploy --dry-run`, bundled once per test file) under miniflare,
 * reaching the test Redis through a REST bridge of its own; drains on enqueue off, so a job the
 * test enqueues stays where it put it.
 */
export async function startWorkerTarget({ redisUrl, token }: TargetOptions): Promise<Target> {
  bundle ??= buildWorker();
  const bridgeToken = randomBytes(16).toString('hex');
  const bridge = await startBridge({ redisUrl, token: bridgeToken });
  try {
    const { mf, url } = await startMiniflareWorker({
      bundlePath: bundle.path,
      bridgeUrl: bridge.url,
      bridgeToken,
      ...(token === undefined ? {} : { emqToken: token }),
      bindings: { EMQ_DRAIN_ON_ENQUEUE_MS: '0', ...(token === undefined ? { EMQ_LOCAL_DEV: '1' } : {}) },
    });
    return {
      kind: 'worker',
      url,
      token,
      close: async () => {
        await mf.dispose();
        await bridge.close();
      },
    };
  } catch (error) {
    await bridge.close();
    throw error;
  }
}

/**
 * Starts the target of `kind`.
 *
 * @example
 * const target = await startTarget('worker', { redisUrl: inject('redisUrl'), token: 'ui-token' });
 * await fetch(`${target.url}/healthz`);
 * await target.close();
 */
export function startTarget(kind: TargetKind, options: TargetOptions): Promise<Target> {
  return kind === 'node' ? startNodeTarget(options) : startWorkerTarget(options);
}
