import { Redis } from 'ioredis';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type MiniflareWorker, startMiniflareWorker } from './miniflare-worker.js';
import { startReportServer } from './report-server.js';
import { buildEntryWorker } from './worker-bundle.js';

/** What a suite of a Worker of its own that reports to it (`reportingWorkerEntry`) runs on. */
export interface ReportingSuiteOptions {
  /** The Worker's module source, and the name it is bundled under (`buildEntryWorker`). */
  readonly entry: string;
  readonly name: string;
  /** The Redis the suite's bridge and clients talk to (`inject('redisUrl')`). */
  readonly redisUrl: string;
  /** The suite's own bridge's token, and the API's (`EMQ_TOKEN`) its Workers are bound to. */
  readonly bridgeToken: string;
  readonly emqToken: string;
  /** Each report's JSON body, as the Worker POSTs it: the suite's bookkeeping is its own. */
  onReport(body: unknown): void;
}

/** A suite's Worker bundle, its report server, its REST bridge and its Node clients. */
export interface ReportingSuite {
  /** The suite's own bridge (its request counts are the suite's alone). */
  readonly bridge: RunningBridge;
  /** A plain ioredis client, to read and poke Redis state. */
  readonly raw: Redis;
  readonly transport: IoredisTransport;
  /** The suite's Worker under miniflare, bound to the bridge, the API token, `REPORT_URL` and `bindings`; the caller disposes it. */
  startWorker(bindings: Readonly<Record<string, string>>): Promise<MiniflareWorker>;
  /** Closes the clients, the bridge and the report server. */
  close(): Promise<void>;
}

/**
 * The Worker of a suite bundled, its report server, a REST bridge and the Node clients started,
 * in that order (a suite's `beforeAll`); `close` in its `afterAll`.
 *
 * @example
 * const runs: Run[] = [];
 * const suite = await startReportingSuite({ entry: ENTRY, name: 'echomq-rate-test', redisUrl: inject('redisUrl'), bridgeToken: BRIDGE_TOKEN, emqToken: EMQ_TOKEN, onReport: (body) => runs.push(body as Run) });
 * const { mf } = await suite.startWorker({ RATE_QUEUE: name });
 * await mf.dispose();
 * await suite.close();
 */
export async function startReportingSuite(options: ReportingSuiteOptions): Promise<ReportingSuite> {
  const bundlePath = buildEntryWorker(options.entry, options.name);
  const reports = await startReportServer((body) => options.onReport(body));
  const bridge = await startBridge({ redisUrl: options.redisUrl, token: options.bridgeToken });
  const raw = new Redis(options.redisUrl);
  const transport = IoredisTransport.connect(options.redisUrl);
  return {
    bridge,
    raw,
    transport,
    startWorker: (bindings) =>
      startMiniflareWorker({
        bundlePath,
        bridgeUrl: bridge.url,
        bridgeToken: options.bridgeToken,
        emqToken: options.emqToken,
        bindings: { REPORT_URL: reports.url, ...bindings },
      }),
    close: async () => {
      await transport.close();
      raw.disconnect();
      await bridge.close();
      await reports.close();
    },
  };
}
