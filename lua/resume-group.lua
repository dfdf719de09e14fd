--[[
  resume-group: a paused group hands out work again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  Derives  emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1 resumed now, 0 was not paused
  Events   `group-resumed` (g) when it resumed the group (not when it was not paused)
  Rings    the doorbell when its lane went back on the ring
]]
-- @include keyspace
-- @include match_ring
-- @include emit

local g = ARGV[2]
local resumed = redis.call('SREM', K_GPAUSED, g)
-- a paused group is off the ring (pause-group took it off, and nothing puts back a paused one)
if resumed == 1 then
  match_ring(g, false)
  emit('group-resumed', nil, 'g', g)
end
return resumed
