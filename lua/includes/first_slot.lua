-- @include queue_meta
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in `schedulers` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta `sc` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
