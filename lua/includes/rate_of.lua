-- @include rate_spec
-- @include parse_rate
-- The rate limit of `entry` (QUEUE_ENTRY for the queue's own): limit and period in ms, or nil
-- when it has none.
local function rate_of(entry)
  return parse_rate(rate_spec(entry))
end
