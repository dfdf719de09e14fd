-- The lowest score in zset `key` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
