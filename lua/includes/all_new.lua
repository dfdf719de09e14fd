-- @include job_key
-- Whether every id of a batch names a new job: no id repeats within the batch and none of their
-- rows exists, asked with one EXISTS per 1000 ids (Lua's unpack has a limit) instead of one per
-- id. `ids` holds each id to be written, a generated one included. Returns true and the ids' row
-- keys in order, or false: that says nothing about any one id, and the caller checks each.
local function all_new(ids)
  local keys, seen = {}, {}
  for i, id in ipairs(ids) do
    if seen[id] then return false end
    seen[id] = true
    keys[i] = job_key(id)
  end
  for i = 1, #keys, 1000 do
    if redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys))) > 0 then return false end
  end
  return true, keys
end
