--[[
  set-events: the queue's events settings, stored in its meta so every runtime's scripts apply the
  same ones (includes/events_settings.lua reads them once per call): `ecap`, the stream's MAXLEN
  (about how many entries it keeps; 0 turns events off), and `erb`, the most bytes of a result a
  `completed` event carries. A cap of 0 deletes the stream at once (with events off there is no
  stream); a lower cap trims it at once to about that many entries (XTRIM MAXLEN ~, unlimited:
  an XADD trims at most 100 macro nodes a call), so the stream is within its cap when this returns.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  maxLen (0 to 10000000), or -1 to leave it as it is
  ARGV[3]  resultBytes (0 to 1048576), or -1 to leave it as it is
  Reply    {maxLen, resultBytes}: the settings now
  Errors   EMQARG (a malformed or out-of-range number), before anything is written
]]
-- @include keyspace
-- @include arg_int
-- @include events_settings

local max_len = arg_int(ARGV[2], 'maxLen', -1)
local result_bytes = arg_int(ARGV[3], 'resultBytes', -1)
if max_len > 10000000 then error(redis.error_reply('EMQARG maxLen must be at most 10000000, got ' .. ARGV[2])) end
if result_bytes > 1048576 then error(redis.error_reply('EMQARG resultBytes must be at most 1048576, got ' .. ARGV[3])) end
if max_len >= 0 then
  local cap = string.format('%d', max_len)
  redis.call('HSET', K_META, 'ecap', cap)
  if max_len == 0 then
    redis.call('DEL', K_EVENTS)
  else
    redis.call('XTRIM', K_EVENTS, 'MAXLEN', '~', cap, 'LIMIT', 0)
  end
end
if result_bytes >= 0 then redis.call('HSET', K_META, 'erb', string.format('%d', result_bytes)) end
local cap, bytes = events_settings()
return { tonumber(cap), bytes }
