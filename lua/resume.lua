--[[
  resume: a paused queue hands out work again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    1 resumed now, 0 was not paused
  Rings    the doorbell when it resumed and work is claimable
]]
-- @include keyspace
-- @include ring_doorbell

local resumed = redis.call('HDEL', K_META, 'paused')
if resumed == 1 and redis.call('LLEN', K_RING) > 0 then ring_doorbell() end
return resumed
