-- @include job_key
-- @include count_existing
-- Whether every id of a batch names a new job: no id repeats within the batch and none of their
-- rows exists, asked with one EXISTS for the batch instead of one per id. `ids` holds each id to
-- be written, a generated one included. Returns true and the ids' row keys in order, or false:
-- that says nothing about any one id, and the caller checks each.
local function all_new(ids)
  local keys, seen = {}, {}
  for i, id in ipairs(ids) do
    if seen[id] then return false end
    seen[id] = true
    keys[i] = job_key(id)
  end
  if count_existing(keys) > 0 then return false end
  return true, keys
end
