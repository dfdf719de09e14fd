--[[
  events-settings: the queue's events settings (see set-events).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    {maxLen, resultBytes}, the defaults (10000, 1024) for what was never set
]]
-- @include keyspace
-- @include events_settings

local cap, bytes = events_settings()
return { tonumber(cap), bytes }
