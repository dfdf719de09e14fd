-- @include job_key
-- @include admit_one
-- @include collect_event
-- A waiting flow parent whose children have all finished becomes pending: off the waiting set,
-- into its lane at its order (`order`, the row's `o`; `group` its group or false), with a
-- `released` event (n: `children`, how many it waited for). Returns whether it is claimable now (the caller rings the doorbell).
local function release_parent(id, group, order, children)
  redis.call('ZREM', K_WAITING, id)
  redis.call('HSET', job_key(id), 's', 'pending')
  collect_event('released', id, 'g', group or nil, 'n', children)
  return admit_one(group, order, id)
end
