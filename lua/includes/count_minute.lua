-- Count `n` (>= 1) jobs of kind `kind` ('c' completed, 'd' sent to dead) in the minute of `now`
-- (the script's server ms) in K_MINUTES, field `<kind><minute>`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end
