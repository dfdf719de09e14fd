--[[
  resume: a paused queue hands out work again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    1 resumed now, 0 was not paused
  Events   `resumed` when it resumed the queue (not when it was not paused)
  Rings    the doorbell when it resumed and work is claimable
]]
-- @include keyspace
-- @include ring_doorbell
-- @include emit

local resumed = redis.call('HDEL', K_META, 'paused')
if resumed == 1 then
  if redis.call('LLEN', K_RING) > 0 then ring_doorbell() end
  emit('resumed')
end
return resumed
