--[[
  set-rate: set the rate limit of the queue or of group g (at most `limit` job starts in any
  window of `periodMs`, on the server's clock), or lift it. Live: a raised or lifted limit that
  lets the entry start again readmits it now; a lowered one that it is over throttles it now.
  Starts before a limit was set are not counted (the log is written only while there is one);
  lifting one deletes its log.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the entry: a group, or "!" for the queue's own limit
  ARGV[3]  limit (>= 1), or -1 to lift it
  ARGV[4]  periodMs (>= 1; ignored when lifting)
  Derives  emq:{q}:grate, emq:{q}:holds, emq:{q}:starts[:<group>], emq:{q}:lane:<group>,
           emq:{q}:fifo[:<group>]
  Reply    1
  Events   `rate` (g for a group, l the limit and p the period, both '' when lifted) when the
           limit changed (setting the one it has appends nothing)
  Errors   EMQARG
  Rings    the doorbell when the change let throttled work start; the schedule bell when the
           entry's new throttle time is the queue's next due time
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include starts_key
-- @include rate_spec
-- @include closed_until
-- @include reopen
-- @include throttle
-- @include ring_doorbell
-- @include emit

local entry = ARGV[2]
local limit = arg_int(ARGV[3], 'limit', -1)
if limit == 0 then error(redis.error_reply('EMQARG limit must be an integer >= 1, or -1 to lift it, got 0')) end
local period = 0
if limit > 0 then period = arg_int(ARGV[4], 'periodMs', 1) end
local set = limit > 0 and string.format('%d:%d', limit, period) or false
if rate_spec(entry) == set then return 1 end
if entry == QUEUE_ENTRY then
  if set then redis.call('HSET', K_META, 'rate', set) else redis.call('HDEL', K_META, 'rate') end
else
  if set then redis.call('HSET', K_GRATE, entry, set) else redis.call('HDEL', K_GRATE, entry) end
  -- how many groups have one: claims read the groups' limits only when some group does
  local grates = redis.call('HLEN', K_GRATE)
  if grates > 0 then redis.call('HSET', K_META, 'grates', grates) else redis.call('HDEL', K_META, 'grates') end
end
if not set then redis.call('DEL', starts_key(entry)) end

-- the entry's throttle under the new limit: readmitted, moved, or begun
local now = now_ms()
local at = closed_until(entry, now)
local throttled = redis.call('ZSCORE', K_THROTTLED, entry)
if at > now then
  if throttled then redis.call('ZADD', K_THROTTLED, string.format('%d', at), entry) end
  throttle(entry, at)
  if entry ~= QUEUE_ENTRY then redis.call('LREM', K_RING, 0, entry) end
elseif throttled and reopen(entry, now) then
  ring_doorbell()
end
emit('rate', nil, 'g', entry ~= QUEUE_ENTRY and entry or nil, 'l', set and string.format('%d', limit) or '', 'p', set and string.format('%d', period) or '')
return 1
