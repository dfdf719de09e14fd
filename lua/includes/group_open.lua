-- @include group_admits
-- @include queue_meta
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
