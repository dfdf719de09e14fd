-- @include batch_entry
-- Collect job `id` for admission (see admit) into ring entry g's ordered zset with `score`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
