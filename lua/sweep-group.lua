--[[
  sweep-group: the counted sweep. Recount group g's active jobs from the active set itself,
  repair the stored count, and put the lane on (or take it off) the ring to match.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    {stored count before, true count}
  Rings    the doorbell when the lane went back on the ring
]]
-- @include keyspace
-- @include job_key
-- @include active_skiplist
-- @include match_ring

local g = ARGV[2]
local stored = tonumber(redis.call('HGET', K_GACTIVE, g) or '0')
local counted = 0
for _, id in ipairs(lease_range(0, -1)) do
  if redis.call('HGET', job_key(id), 'g') == g then counted = counted + 1 end
end
if counted > 0 then
  redis.call('HSET', K_GACTIVE, g, counted)
else
  redis.call('HDEL', K_GACTIVE, g)
end
-- the stored count may have been wrong and the ring with it: ask the ring, not the count
match_ring(g, redis.call('LPOS', K_RING, g) ~= false)
return { stored, counted }
