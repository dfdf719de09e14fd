import { runScripts } from '../run-scripts.js';
import { listQueues, Scripts } from '../scripts.js';
import type { Transport } from '../transport.js';

const STATES = ['pending', 'scheduled', 'active', 'dead'] as const;
const CHUNK = 100;

const label = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Prometheus text for every registered queue: jobs per state (gauges), completed and dead totals
 * (counters), the paused flag. Counts go in one round trip per 100 queues.
 */
export async function renderMetrics(transport: Transport): Promise<string> {
  const names = await listQueues(transport);
  const rows: Array<{ queue: string; counts: ReturnType<ReturnType<Scripts['countsOp']>['parse']> }> = [];
  for (let i = 0; i < names.length; i += CHUNK) {
    const ops = names.slice(i, i + CHUNK).map((name) => ({ name, op: new Scripts(transport, name).countsOp() }));
    const replies = await runScripts(transport, ops.map((o) => o.op.call));
    ops.forEach((o, j) => rows.push({ queue: o.name, counts: o.op.parse(replies[j]!) }));
  }
  const lines = [
    '# HELP emq_jobs Jobs in each state, per queue.',
    '# TYPE emq_jobs gauge',
    ...rows.flatMap(({ queue, counts }) => STATES.map((state) => `emq_jobs{queue="${label(queue)}",state="${state}"} ${counts[state]}`)),
    '# HELP emq_jobs_completed_total Jobs completed, per queue.',
    '# TYPE emq_jobs_completed_total counter',
    ...rows.map(({ queue, counts }) => `emq_jobs_completed_total{queue="${label(queue)}"} ${counts.completed}`),
    '# HELP emq_jobs_dead_total Jobs sent to dead (attempts used up or failed for good), per queue.',
    '# TYPE emq_jobs_dead_total counter',
    ...rows.map(({ queue, counts }) => `emq_jobs_dead_total{queue="${label(queue)}"} ${counts.buried}`),
    '# HELP emq_queue_paused Whether the queue is paused (1) or not (0).',
    '# TYPE emq_queue_paused gauge',
    ...rows.map(({ queue, counts }) => `emq_queue_paused{queue="${label(queue)}"} ${counts.paused ? 1 : 0}`),
  ];
  return `${lines.join('\n')}\n`;
}
