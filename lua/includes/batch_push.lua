-- Collect job `id` with `score` for admission into ring entry g's lane (see admit). `batch` is
-- {order = {entries in first-seen order}, [entry] = {score, id, score, id, ...}}.
local function batch_push(batch, g, score, id)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local members = batch[g]
  if not members then
    members = {}
    batch[g] = members
    batch.order[#batch.order + 1] = g
  end
  members[#members + 1] = score
  members[#members + 1] = id
end
