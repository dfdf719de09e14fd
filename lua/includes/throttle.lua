-- @include ring_sched_bell_at
-- Throttle `entry` (a ring entry, or QUEUE_ENTRY) until `at` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). `at` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it.
local function throttle(entry, at)
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
