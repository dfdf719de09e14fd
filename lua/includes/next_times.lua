-- @include active_skiplist
-- @include next_due
-- When the queue runs dry a consumer parks until the next thing that can make work claimable:
-- the next due time (a scheduled job or a scheduler's slot) and the earliest lease deadline (-1
-- for none).
local function next_times()
  return next_due(), first_lease()
end
