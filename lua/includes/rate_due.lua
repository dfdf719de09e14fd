-- @include starts_key
-- @include rate_used
-- When `entry` may start one more job under its rate limit (`limit` starts per `period` ms): now
-- when fewer than `limit` starts are in the window, else the time enough of them leave it that
-- one more fits (the (used - limit + 1)th oldest start plus the period).
local function rate_due(entry, limit, period, now)
  local used = rate_used(entry, period, now)
  if used < limit then return now end
  local at = redis.call('ZRANGE', starts_key(entry), used - limit, used - limit, 'WITHSCORES')[2]
  return tonumber(at) + period
end
