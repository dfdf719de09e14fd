-- @include first_score
-- @include first_slot
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then.
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), first_score(K_THROTTLED) }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
