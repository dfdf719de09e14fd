--[[
  pause: the queue hands out nothing until resumed; leased jobs finish normally.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    1 paused now, 0 was already paused
  Events   `paused` when it paused the queue (not when it was paused already)
]]
-- @include keyspace
-- @include emit

local paused = redis.call('HSETNX', K_META, 'paused', 1)
if paused == 1 then emit('paused') end
return paused
