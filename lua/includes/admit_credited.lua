-- @include key_slots
-- @include admit
-- The jobs key_slots' credit took back from keys' waits (a job that left its lane without
-- starting gives back the room it may have been readmitted with) go back to their lanes. Returns
-- true when work became claimable (the caller rings the doorbell).
local function admit_credited()
  if not key_slots_made then return false end
  local back = key_slots_made.readmits()
  return back ~= nil and admit(back)
end
