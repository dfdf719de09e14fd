-- @include free_slot
-- Free the group slots counted by tally. Returns true when any lane went back on the ring.
local function free_slots(t)
  local woke = false
  for _, g in ipairs(t.order) do
    if free_slot(g, t[g]) then woke = true end
  end
  return woke
end
