/**
 * `echomq/node`: the Node runtime. The parked consumers (`Consumer`, `BatchConsumer`), the ioredis
 * transport, the HTTP API's server (`serveApi`, what `emq serve` runs), the Upstash-REST bridge
 * for local edge work, and a private redis-server for local runs.
 *
 * @module echomq/node
 */
export { IoredisTransport } from './ioredis-transport.js';
export type { IoredisTransportOptions, IoredisConnectOptions, IoredisClusterOptions, ClusterNodeAddress, IoredisClient } from './ioredis-transport.js';
export { connectQueue } from './connect-queue.js';
export type { ConnectQueueOptions } from './connect-queue.js';
export { startLocalRedis, findRedisServer, freePort, RedisMissingError } from './local-redis.js';
export type { LocalRedis, LocalRedisOptions } from './local-redis.js';
export { Consumer, BatchConsumer, LeaseLostError, ConsumerStoppedError } from './consumer/index.js';
export type { ConsumerOptions, BatchConsumerOptions, BatchHandler, BatchOutcome, ConsumerHooks, ParkedLoopOptions, ConnectOptions, TransportOwnership } from './consumer/index.js';
export { serveApi } from './cli/serve.js';
export type { ApiServer, ServeApiOptions } from './cli/serve.js';
export { startBridge, createBridge } from './bridge/index.js';
export type { RunningBridge, StartBridgeOptions, Bridge, BridgeOptions, BridgeStats } from './bridge/index.js';
