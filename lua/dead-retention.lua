--[[
  dead-retention: the queue's retention of dead jobs (see set-dead-retention).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    {maxAgeMs or -1, maxCount or -1}
]]
-- @include keyspace

local r = redis.call('HMGET', K_META, 'dage', 'dmax')
return { tonumber(r[1] or '-1'), tonumber(r[2] or '-1') }
