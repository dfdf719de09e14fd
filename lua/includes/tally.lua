-- Count `g` once in `tally`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
