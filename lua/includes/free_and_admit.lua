-- @include free_slots
-- @include admit
-- @include key_slots
-- The tail every settle shares: free the group slots counted in `freed` (tally), then admit the
-- jobs collected in `batch` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  -- the concurrency keys' slots runs of this call gave back, and the jobs parked on them (key_slots)
  batch = keys_free(batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
