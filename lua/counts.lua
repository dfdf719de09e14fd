--[[
  counts: how many jobs are in each state, and whether the queue is paused.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Derives  emq:{q}:lane:<group> for every group that ever had a lane
  Reply    {pending (ungrouped and every lane), scheduled, active, dead, completed (a counter),
           paused 0|1, buried (a counter: jobs ever sent to dead)}
]]
-- @include keyspace
-- @include lane_key

local pending = redis.call('ZCARD', K_PENDING)
for _, g in ipairs(redis.call('SMEMBERS', K_GROUPS)) do
  pending = pending + redis.call('ZCARD', lane_key(g))
end
return {
  pending,
  redis.call('ZCARD', K_SCHEDULED),
  redis.call('ZCARD', K_ACTIVE),
  redis.call('ZCARD', K_DEAD),
  tonumber(redis.call('HGET', K_META, 'completed') or '0'),
  redis.call('HEXISTS', K_META, 'paused'),
  tonumber(redis.call('HGET', K_META, 'buried') or '0'),
}
