-- The part of `batch` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. `batch.order` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
