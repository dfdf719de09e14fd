export { UpstashTransport } from './upstash-transport.js';
export type { UpstashConnectOptions, UpstashEnv } from './upstash-transport.js';
