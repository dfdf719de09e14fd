/**
 * `npm run chaos`: fault scenarios against a private Redis, each printing one JSON line of counts
 * (what was injected, every job accounted for), then a table; exit 1 when a scenario breaks a
 * promise (a job lost, one enqueue made two jobs, a re-run no lapsed lease explains, an invariant
 * violation, a job left unfinished). `--quick` is the bounded run CI makes; without it, the full
 * run behind docs/reliability.md. `--scenario NAME` runs one; `--seed N` repeats a run.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalRedis } from '../src/node/local-redis.js';
import { broken, type Scenario, type ScenarioResult } from './lib/scenario.js';
import { clusterFailover } from './scenarios/cluster-failover.js';
import { dedupeFaults } from './scenarios/dedupe-faults.js';
import { edgeDrainFaults, edgeFaults } from './scenarios/edge-faults.js';
import { platformsFaults } from './scenarios/platforms-faults.js';
import { flowFaults } from './scenarios/flow-faults.js';
import { fuzzHttp } from './scenarios/fuzz-http.js';
import { fuzzOptions } from './scenarios/fuzz-options.js';
import { killedConsumers } from './scenarios/killed-consumers.js';
import { partitionFaults } from './scenarios/partition-faults.js';
import { rateFaults } from './scenarios/rate-faults.js';
import { redisRestart } from './scenarios/redis-restart.js';
import { redisRestartEverysec } from './scenarios/redis-restart-everysec.js';
import { schedulerFaults } from './scenarios/scheduler-faults.js';
import { soak } from './scenarios/soak.js';
import { stepsFaults } from './scenarios/steps-faults.js';
import { cancelFaults } from './scenarios/cancel-faults.js';
import { expiryFaults } from './scenarios/expiry-faults.js';
import { keysFaults } from './scenarios/keys-faults.js';

const SCENARIOS: readonly Scenario[] = [edgeFaults, edgeDrainFaults, platformsFaults, killedConsumers, schedulerFaults, rateFaults, dedupeFaults, flowFaults, stepsFaults, cancelFaults, expiryFaults, keysFaults, partitionFaults, clusterFailover, redisRestart, redisRestartEverysec, fuzzHttp, fuzzOptions, soak];

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, scenario: { type: 'string', multiple: true }, seed: { type: 'string', default: '1' }, 'no-record': { type: 'boolean', default: false } },
});
const chosen = values.scenario ? SCENARIOS.filter((s) => values.scenario!.includes(s.name)) : SCENARIOS;
if (chosen.length === 0) {
  console.error(`no such scenario: ${values.scenario?.join(', ')} (have: ${SCENARIOS.map((s) => s.name).join(', ')})`);
  process.exit(2);
}

const redis = await startLocalRedis({ env: { PATH: process.env.PATH }, log: (line) => console.log(`# ${line}`) });
const results: ScenarioResult[] = [];
let failed = 0;
try {
  for (const scenario of chosen) {
    console.log(`# ${scenario.name}: running${values.quick ? ' (quick)' : ''}`);
    const result = { ...(await scenario.run({ redisUrl: redis.url, quick: values.quick, seed: Number(values.seed) })), quick: values.quick ? 1 : 0, seed: Number(values.seed), date: new Date().toISOString() };
    results.push(result);
    console.log(JSON.stringify(result));
    const broke = broken(result);
    if (broke.length > 0) {
      failed++;
      console.log(`# ${scenario.name}: BROKE ${broke.join(', ')}`);
    }
  }
} finally {
  await redis.stop();
}
if (!values['no-record']) {
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `${new Date().toISOString().slice(0, 10)}.jsonl`), results.map((r) => `${JSON.stringify(r)}\n`).join(''));
}
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
