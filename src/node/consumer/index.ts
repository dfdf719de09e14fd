export { Consumer } from './consumer.js';
export type { ConsumerOptions } from './consumer.js';
export { BatchConsumer } from './batch-consumer.js';
export type { BatchConsumerOptions, BatchHandler, BatchOutcome } from './batch-consumer.js';
export { LeaseLostError, ConsumerStoppedError } from './errors.js';
export type { ConsumerHooks } from './hooks.js';
export type { ParkedLoopOptions } from './options.js';
export type { ConnectOptions } from './connect.js';
export type { TransportOwnership } from './parked-consumer.js';
