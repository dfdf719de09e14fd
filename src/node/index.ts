export { IoredisTransport } from './ioredis-transport.js';
export { startLocalRedis, findRedisServer, freePort, RedisMissingError } from './local-redis.js';
export type { LocalRedis, LocalRedisOptions } from './local-redis.js';
export { Consumer } from './consumer.js';
export type { ConsumerOptions } from './consumer.js';
export { BatchConsumer } from './batch-consumer.js';
export type { BatchConsumerOptions, BatchHandler } from './batch-consumer.js';
export { LeaseLostError, ConsumerStoppedError } from './parked-loop.js';
export type { ConsumerHooks, ParkedLoopOptions } from './parked-loop.js';
