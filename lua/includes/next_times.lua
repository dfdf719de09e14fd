-- @include first_score
-- When the queue runs dry a consumer parks until the next thing that can make work claimable:
-- the first scheduled job's due time and the earliest lease deadline (-1 for none).
local function next_times()
  return first_score(K_SCHEDULED), first_score(K_ACTIVE)
end
