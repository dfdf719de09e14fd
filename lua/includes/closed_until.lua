-- @include rate_of
-- @include rate_due
-- When ring entry `entry` (or QUEUE_ENTRY) may start a job again, as far as its hold and its rate
-- limit say (its pause, concurrency limit and lane aside): a time <= now means it may now.
local function closed_until(entry, now)
  local at = tonumber(redis.call('HGET', K_HOLDS, entry)) or 0
  local limit, period = rate_of(entry)
  if limit then
    local due = rate_due(entry, limit, period, now)
    if due > at then at = due end
  end
  return at
end
