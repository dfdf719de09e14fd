-- @include queue_meta
-- @include now_ms
-- @include job_key
-- @include free_slot
-- @include ring_doorbell
-- @include end_cancelled
-- The check a settle that ends a run (complete, retry, fail, release, suspend) makes first, while
-- any run of the queue has its cancel asked (meta `cx` counts them; at none it pays nothing): job
-- `id` active under lease token `token` with a cancel asked (its row's `cx`) ends cancelled here,
-- whatever its run's outcome (docs/design/job-controls.md): out of active, its group slot freed
-- (the doorbell rung when that made work claimable), `t` marked `<token>/x`. The settle's fence
-- then finds it no longer held and each_held answers it as cancelled. Passed to each_held as its
-- `ends`; the caller flushes the events.
local function settle_cancelled(id, token)
  if not queue_meta().cx then return end
  local r = redis.call('HMGET', job_key(id), 's', 't', 'cx', 'g', 'dk', 'dt', 'fp')
  if r[1] ~= 'active' or r[2] ~= token or not r[3] then return end
  redis.call('ZREM', K_ACTIVE, id)
  if free_slot(r[4] or nil, 1) then ring_doorbell() end
  end_cancelled(id, r[4] or nil, r[3], now_ms(), token .. '/x', r[5], r[6], r[7], token)
end
