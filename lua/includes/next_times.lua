-- When the queue runs dry a consumer parks until the next thing that can make work claimable:
-- the first scheduled job's due time and the earliest lease deadline (-1 for none).
local function next_times()
  local s = redis.call('ZRANGE', K_SCHEDULED, 0, 0, 'WITHSCORES')
  local a = redis.call('ZRANGE', K_ACTIVE, 0, 0, 'WITHSCORES')
  return tonumber(s[2]) or -1, tonumber(a[2]) or -1
end
