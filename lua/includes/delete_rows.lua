-- @include job_key
-- Delete the rows of jobs `ids`, one DEL per 1000 (Lua's unpack has a limit).
local function delete_rows(ids)
  local keys = {}
  for i, id in ipairs(ids) do keys[i] = job_key(id) end
  for i = 1, #keys, 1000 do redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end
end
