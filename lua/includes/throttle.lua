-- @include ring_sched_bell_at
-- @include queue_meta
-- Throttle `entry` (a ring entry, or QUEUE_ENTRY) until `at` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). `at` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it. The queue's
-- first throttle sets meta `th`, under which the scripts read `throttled` at all.
local function throttle(entry, at)
  mark_feature('th')
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
