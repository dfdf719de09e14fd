--[[
  group-limit: set group g's limit on active jobs, or lift it. Lowering it below the jobs already
  active takes nothing back: no new claim until the group is below it.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  ARGV[3]  limit (>= 0), or -1 to lift it
  Derives  emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1
  Errors   EMQARG
  Rings    the doorbell when the change put the lane back on the ring
]]
-- @include keyspace
-- @include arg_int
-- @include lane_serviceable
-- @include match_ring

local g = ARGV[2]
local limit = arg_int(ARGV[3], 'limit', -1)
local before = lane_serviceable(g)
if limit < 0 then
  redis.call('HDEL', K_GLIMIT, g)
else
  redis.call('HSET', K_GLIMIT, g, limit)
end
match_ring(g, before)
return 1
