export { IoredisTransport } from './ioredis-transport.js';
export { startLocalRedis, findRedisServer, freePort, RedisMissingError } from './local-redis.js';
export type { LocalRedis, LocalRedisOptions } from './local-redis.js';
