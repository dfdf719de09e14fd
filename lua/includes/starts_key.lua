-- The log of `entry`'s recent job starts (a zset: member a lease token, score the start's server
-- ms): emq:{q}:starts for the queue's own rate limit, emq:{q}:starts:<g> for group g's.
local function starts_key(entry)
  if entry == QUEUE_ENTRY then return PREFIX .. 'starts' end
  return PREFIX .. 'starts:' .. entry
end
