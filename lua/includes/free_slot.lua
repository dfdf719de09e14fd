-- @include free_slots
-- `count` jobs of group g left the active set: free_slots for one group. Returns true when the
-- group went back on the ring (work became claimable).
local function free_slot(g, count)
  if not g or g == '' then return false end
  local t = { order = { g } }
  t[g] = count
  return free_slots(t)
end
