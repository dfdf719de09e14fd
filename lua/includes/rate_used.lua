-- @include starts_key
-- How many jobs `entry` started within the window of `period` ms that ends now: its starts log
-- trimmed to the starts after now - period (a start at s counts until s + period), then counted.
local function rate_used(entry, period, now)
  local key = starts_key(entry)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - period))
  return redis.call('ZCARD', key)
end
