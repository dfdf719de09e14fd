import { ADMIN_USAGE } from './admin.js';
import { CANCEL_USAGE } from './cancel.js';
import { CONSUME_USAGE } from './consume.js';
import { ENQUEUE_USAGE } from './enqueue.js';
import { EVENTS_USAGE } from './events.js';
import { FLOW_USAGE } from './flow.js';
import { GROUPS_USAGE } from './groups.js';
import { INIT_USAGE } from './init.js';
import { JOB_USAGE } from './job.js';
import { KEYS_USAGE } from './keys.js';
import { SEND_EVENT_USAGE } from './send-event.js';
import { QUEUES_USAGE } from './queues.js';
import { RATE_USAGE } from './rate.js';
import { SCHEDULE_USAGE } from './schedule.js';
import { SERVERS_USAGE } from './servers.js';
import { STATS_USAGE } from './stats.js';

/** `emq --help`: each command's usage lines, from beside the command, and what they share. */
export const USAGE = `emq: echomq's command line (Redis from REDIS_URL, default redis://127.0.0.1:6379, or a
Redis Cluster from REDIS_CLUSTER_NODES)

usage:
${CONSUME_USAGE}
${ENQUEUE_USAGE}
${FLOW_USAGE}
${JOB_USAGE}
${SEND_EVENT_USAGE}
${CANCEL_USAGE}
${EVENTS_USAGE}
${STATS_USAGE}
${QUEUES_USAGE}
  Every command that takes a <queue> addresses a partitioned queue by its name (the registry
  says how many partitions it has): counts summed, listings merged, admin on every partition.
${ADMIN_USAGE}
${GROUPS_USAGE}
${KEYS_USAGE}
${SCHEDULE_USAGE}
${RATE_USAGE}
${SERVERS_USAGE}
${INIT_USAGE}

environment: REDIS_URL (default redis://127.0.0.1:6379), or REDIS_CLUSTER_NODES=host:port,...
(a Redis Cluster: one node is enough, the rest is learnt from it; both set is a usage error);
REDIS_CONNECT_TIMEOUT_MS, how long a command waits for Redis to answer before it fails with
exit 1 (default 5000): emq consume fails so only at start, and afterwards reconnects for as long
as it runs; EMQ_DURABILITY=replicated (default acknowledged), each write of enqueue, consume,
serve and flow followed by a WAIT for a replica within EMQ_REPLICATION_TIMEOUT_MS (default 1000),
else it fails with EMQREPLICA (the write is applied, and safe to send again).

exit codes: 0 done, 1 failed (Redis, a handler module, a file init would overwrite), 2 usage`;
