-- @include job_key
-- @include bury
-- @include collect_event
-- A waiting flow parent whose child `field` (`<queue>|<id>`) died under `onFailure:
-- 'fail-parent'` goes to dead with that child's error `err`; its row's `fx` names the child, so
-- the child reprocessed lets it wait again (flow-apply). A parent that is itself a child tells
-- its own parent (bury).
local function fail_parent(id, field, err, now)
  local key = job_key(id)
  local r = redis.call('HMGET', key, 'g', 'dk', 'dt', 'fp', 't')
  local bar = string.find(field, '|', 1, true)
  local why = 'child ' .. string.sub(field, bar + 1) .. ' of queue ' .. string.sub(field, 1, bar - 1) .. ' failed: ' .. err
  redis.call('ZREM', K_WAITING, id)
  -- before bury: the queue's dead retention may delete the row at once
  redis.call('HSET', key, 'fx', field)
  bury(id, why, now, nil, r[2], r[3], r[4], r[5])
  collect_event('dead', id, 'g', r[1], 'x', why)
end
