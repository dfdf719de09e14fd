import { queueOverviews } from '../queue/registry.js';
import type { Transport } from '../transport.js';

/** The states `emq_jobs` counts now: every QueueCounts field but completed, a counter of its own. */
const STATES = ['pending', 'scheduled', 'active', 'dead', 'waiting', 'awaiting', 'sleeping', 'cancelled'] as const;

const label = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Prometheus text for every registered queue: jobs per state (gauges), completed, dead, retried
 * and stalled totals, scheduler slots fired and rate-limit throttles (counters), the paused flag.
 */
export async function renderMetrics(transport: Transport): Promise<string> {
  const rows = await queueOverviews(transport);
  const lines = [
    '# HELP emq_jobs Jobs in each state, per queue.',
    '# TYPE emq_jobs gauge',
    ...rows.flatMap(({ queue, counts }) => STATES.map((state) => `emq_jobs{queue="${label(queue)}",state="${state}"} ${counts[state]}`)),
    '# HELP emq_jobs_completed_total Jobs completed, per queue.',
    '# TYPE emq_jobs_completed_total counter',
    ...rows.map(({ queue, counts }) => `emq_jobs_completed_total{queue="${label(queue)}"} ${counts.completed}`),
    '# HELP emq_jobs_dead_total Jobs sent to dead (attempts used up or failed for good), per queue.',
    '# TYPE emq_jobs_dead_total counter',
    ...rows.map(({ queue, deadTotal }) => `emq_jobs_dead_total{queue="${label(queue)}"} ${deadTotal}`),
    '# HELP emq_jobs_retried_total Failed attempts sent to run again (retried events), per queue.',
    '# TYPE emq_jobs_retried_total counter',
    ...rows.map(({ queue, retriedTotal }) => `emq_jobs_retried_total{queue="${label(queue)}"} ${retriedTotal}`),
    '# HELP emq_jobs_stalled_total Leases that lapsed and were reaped (stalled events), per queue.',
    '# TYPE emq_jobs_stalled_total counter',
    ...rows.map(({ queue, stalledTotal }) => `emq_jobs_stalled_total{queue="${label(queue)}"} ${stalledTotal}`),
    '# HELP emq_scheduler_fired_total Scheduler slots fired (each enqueued one job), per queue.',
    '# TYPE emq_scheduler_fired_total counter',
    ...rows.map(({ queue, firedTotal }) => `emq_scheduler_fired_total{queue="${label(queue)}"} ${firedTotal}`),
    '# HELP emq_rate_limited_total Times a group or the queue reached its rate limit and held its next starts back until one more fitted, per queue.',
    '# TYPE emq_rate_limited_total counter',
    ...rows.map(({ queue, rateLimitedTotal }) => `emq_rate_limited_total{queue="${label(queue)}"} ${rateLimitedTotal}`),
    '# HELP emq_queue_paused Whether the queue is paused (1) or not (0).',
    '# TYPE emq_queue_paused gauge',
    ...rows.map(({ queue, paused }) => `emq_queue_paused{queue="${label(queue)}"} ${paused ? 1 : 0}`),
  ];
  return `${lines.join('\n')}\n`;
}
