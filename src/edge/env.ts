import type { ServerlessEnv } from '../serverless/settings.js';
import type { UpstashEnv } from '../serverless/upstash-transport.js';

/**
 * The bindings the Worker reads (wrangler.toml vars and secrets): the Upstash (or `emq bridge`)
 * REST endpoint and its token, and the EMQ_* settings every platform reads (ServerlessEnv).
 */
export interface WorkerEnv extends ServerlessEnv, UpstashEnv {}
