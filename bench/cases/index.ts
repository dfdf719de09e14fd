import type { BenchCase } from '../lib/context.js';
import { adminChunks } from './admin-chunks.js';
import { cancelPendingBulk } from './cancel-pending-bulk.js';
import { cancelRunning } from './cancel-running.js';
import { clusterCase } from './cluster.js';
import { edgeBusy, edgeDelayed, edgeEnqueue, edgeIdle } from './edge.js';
import { platformCloudflare, platformDeno, platformLambda, platformNetlify, platformVercel } from './platforms.js';
import { delayedBurst } from './delayed-burst.js';
import { delayedSpread } from './delayed-spread.js';
import { enqueueBulk } from './enqueue-bulk.js';
import { enqueueSingle } from './enqueue-single.js';
import { expirySweep } from './expiry-sweep.js';
import { fairnessC1 } from './fairness-c1.js';
import { flowFanout } from './flow-fanout.js';
import { groupsC1 } from './groups-c1.js';
import { groupsC10 } from './groups-c10.js';
import { keyRate } from './key-rate.js';
import { keysC10 } from './keys-c10.js';
import { idleSlots } from './idle-slots.js';
import { memory } from './memory.js';
import { processC1 } from './process-c1.js';
import { processC10 } from './process-c10.js';
import { processC100 } from './process-c100.js';
import { processC100Events } from './process-c100-events.js';
import { rateLimit } from './rate-limit.js';
import { replicated } from './replicated.js';
import { schedulerLateness } from './scheduler-lateness.js';
import { stallRecovery } from './stall-recovery.js';
import { steps } from './steps.js';
import { waitLatency } from './wait-latency.js';
import { wakeLatency } from './wake-latency.js';

/** Every case, in the order a run goes through them (the names are issue 6's). */
export const CASES: readonly BenchCase[] = [
  enqueueSingle,
  enqueueBulk,
  processC1,
  processC10,
  processC100,
  processC100Events,
  wakeLatency,
  waitLatency,
  delayedBurst,
  delayedSpread,
  schedulerLateness,
  stallRecovery,
  edgeBusy,
  edgeIdle,
  edgeEnqueue,
  edgeDelayed,
  platformCloudflare,
  platformLambda,
  platformVercel,
  platformNetlify,
  platformDeno,
  memory,
  groupsC1,
  groupsC10,
  fairnessC1,
  idleSlots,
  rateLimit,
  keyRate,
  flowFanout,
  steps,
  cancelRunning,
  cancelPendingBulk,
  expirySweep,
  keysC10,
  adminChunks,
  clusterCase,
  replicated,
];
