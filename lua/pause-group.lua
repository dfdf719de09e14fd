--[[
  pause-group: group g hands out nothing until resumed (its lane leaves the ring); its leased jobs
  finish normally and new jobs still enter its lane.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  Reply    1 paused now, 0 was already paused
  Events   `group-paused` (g) when it paused the group (not when it was paused already)
]]
-- @include keyspace
-- @include emit

local g = ARGV[2]
local paused = redis.call('SADD', K_GPAUSED, g)
if paused == 1 then
  redis.call('LREM', K_RING, 0, g)
  emit('group-paused', nil, 'g', g)
end
return paused
