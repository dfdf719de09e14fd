-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). `emq:{q}:fifo`
-- for UNGROUPED, else `emq:{q}:fifo:<g>` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
