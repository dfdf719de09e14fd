-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
