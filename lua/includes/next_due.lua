-- @include first_score
-- @include first_slot
-- The next time something falls due (-1 for none): the first scheduled job's due time or the
-- earliest scheduler slot, whichever is sooner. A parked consumer's timer runs a beat then.
local function next_due()
  local job, slot = first_score(K_SCHEDULED), first_slot()
  if job < 0 then return slot end
  if slot < 0 or job <= slot then return job end
  return slot
end
