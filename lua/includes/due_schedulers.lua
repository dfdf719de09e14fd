-- @include scheduler_key
-- @include queue_meta
-- The schedulers whose next slot is due by `now`, at most `limit`, soonest first, as a flat list
-- of 5 values each: id, revision `v`, the slot due `n`, the spec `k` (JSON) and the anchor `an`
-- ('' for none). A beat hands them to its caller, which works out each one's next slot (cron
-- needs croner, which the scripts lack) and fires them with fire-schedulers.lua. Nothing is read
-- on a queue that never made a scheduler (meta `sc`).
local function due_schedulers(now, limit)
  local due = {}
  if not queue_meta().sc then return due end
  local ids = redis.call('ZRANGEBYSCORE', K_SCHEDULERS, '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', scheduler_key(id), 'v', 'n', 'k', 'an')
    if r[1] and r[2] then
      due[#due + 1] = id
      due[#due + 1] = r[1]
      due[#due + 1] = r[2]
      due[#due + 1] = r[3] or ''
      due[#due + 1] = r[4] or ''
    end
  end
  return due
end
