--[[
  resume-group: a paused group hands out work again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  Derives  emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1 resumed now, 0 was not paused
  Rings    the doorbell when its lane went back on the ring
]]
-- @include keyspace
-- @include lane_serviceable
-- @include ring_doorbell

local g = ARGV[2]
local resumed = redis.call('SREM', K_GPAUSED, g)
if resumed == 1 and lane_serviceable(g) then
  redis.call('RPUSH', K_RING, g)
  ring_doorbell()
end
return resumed
