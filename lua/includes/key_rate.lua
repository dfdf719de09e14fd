-- @include rate_of
-- @include rate_used
-- @include starts_key
-- @include throttle
-- A concurrency key's rate limit (docs/design/job-controls.md, "A rate per key"): at most `limit`
-- starts in any window of `period` ms, kept as "limit:periodMs" in emq:{q}:krate (meta `kr` counts
-- the keys that have one). It is the groups' mechanism under the entry `#<key>` (KEY_MARK: no
-- group's name): its starts logged in emq:{q}:starts:#<key>, and while its rate keeps jobs parked
-- on it, the entry is throttled until one more start fits, for a beat to readmit them then.

-- Key k's rate limit and its starts in the window ending `now`: limit, period and used, or nil
-- when it has none.
local function key_rate(k, now)
  local limit, period = rate_of(KEY_MARK .. k)
  if not limit then return nil end
  return limit, period, rate_used(KEY_MARK .. k, period, now)
end

-- When key k (at most `limit` starts a `period`, `used` of them in the window ending `now`) may
-- start one more once `extra` more start at `now`: the (used + extra - limit + 1)th oldest of
-- those starts leaves the window then.
local function key_rate_due(k, limit, period, used, extra, now)
  local i = used + extra - limit
  if i < 0 then return now end
  if i >= used then return now + period end
  return tonumber(redis.call('ZRANGE', starts_key(KEY_MARK .. k), i, i, 'WITHSCORES')[2]) + period
end

-- How many of `c` jobs parked on key k (its wait `wait`) its rate lets go back to their lanes at
-- `now`: all of them when it has none or room for them, else its room, and then, while jobs
-- would be left waiting, k is throttled until one more start fits after that room is spent.
local function key_rate_cap(k, c, wait, now)
  local limit, period, used = key_rate(k, now)
  if not limit or used + c <= limit then return c end
  local room = math.max(0, limit - used)
  if redis.call('ZCARD', wait) > room then throttle(KEY_MARK .. k, key_rate_due(k, limit, period, used, room, now)) end
  return room
end
