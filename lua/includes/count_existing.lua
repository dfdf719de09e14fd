-- How many of `keys` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
