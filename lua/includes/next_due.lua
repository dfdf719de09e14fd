-- @include first_score
-- @include first_slot
-- @include queue_meta
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta `th`), the waits' timeouts once a step was (meta `st`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
