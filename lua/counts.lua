--[[
  counts: how many jobs are in each state, and whether the queue is paused.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Derives  emq:{q}:lane:<group> and emq:{q}:fifo:<group> for every group that ever had a lane,
           emq:{q}:fifo, and emq:{q}:minutes
  Reply    {pending (ungrouped and every lane, and the jobs parked on a full concurrency key), scheduled, active, dead, completed (a counter),
           paused 0|1, buried (a counter: jobs ever sent to dead), retried (a counter: failed
           attempts sent to run again), stalled (a counter: leases reaped), fired (a counter: scheduler
           slots fired), rated (a counter: times a group or the queue reached its rate limit and was
           throttled), waiting (flow parents waiting for their children), minute (the server's
           current minute, floor(ms / 60000)), {the per-minute buckets, flat: field, count, ...}}:
           fields c<minute> (jobs completed in it) and d<minute> (jobs sent to dead), as
           includes/count_minute.lua writes them; the reader keeps the 60 minutes ending with the
           current one (the key of a queue idle for a while may still hold older ones, until its
           next count trims them or the key expires), awaiting (jobs waiting for an event), sleeping
           (scheduled jobs in a durable sleep: docs/design/steps.md), cancelled (jobs ended
           cancelled: docs/design/job-controls.md)}
]]
-- @include keyspace
-- @include lane_size
-- @include now_ms
-- @include active_skiplist

local pending = 0
local entries = redis.call('SMEMBERS', K_GROUPS)
entries[#entries + 1] = UNGROUPED
for _, g in ipairs(entries) do
  local z, f = lane_size(g)
  pending = pending + z + f
end
-- and the jobs parked on a full concurrency key (docs/design/job-controls.md): pending too
for _, k in ipairs(redis.call('SMEMBERS', PREFIX .. 'keys')) do pending = pending + redis.call('ZCARD', PREFIX .. 'kwait:' .. k) end
return {
  pending,
  redis.call('ZCARD', K_SCHEDULED),
  lease_count(),
  redis.call('ZCARD', K_DEAD),
  tonumber(redis.call('HGET', K_META, 'completed') or '0'),
  redis.call('HEXISTS', K_META, 'paused'),
  tonumber(redis.call('HGET', K_META, 'buried') or '0'),
  tonumber(redis.call('HGET', K_META, 'retried') or '0'),
  tonumber(redis.call('HGET', K_META, 'stalled') or '0'),
  tonumber(redis.call('HGET', K_META, 'fired') or '0'),
  tonumber(redis.call('HGET', K_META, 'rated') or '0'),
  redis.call('ZCARD', K_WAITING),
  math.floor(now_ms() / 60000),
  redis.call('HGETALL', K_MINUTES),
  redis.call('ZCARD', PREFIX .. 'awaiting'),
  redis.call('ZCARD', PREFIX .. 'sleeping'),
  redis.call('ZCARD', PREFIX .. 'cancelled'),
}
