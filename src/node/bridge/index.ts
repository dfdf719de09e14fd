export { startBridge, createBridge } from './bridge.js';
export type { RunningBridge, StartBridgeOptions, Bridge, BridgeOptions, BridgeStats } from './bridge.js';
