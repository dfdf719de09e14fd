--[[
  pause: the queue hands out nothing until resumed; leased jobs finish normally.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    1 paused now, 0 was already paused
]]
-- @include keyspace

return redis.call('HSETNX', K_META, 'paused', 1)
