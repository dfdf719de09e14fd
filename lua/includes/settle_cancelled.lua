-- @include queue_meta
-- @include now_ms
-- @include job_key
-- @include free_slot
-- @include ring_doorbell
-- @include end_cancelled
-- @include key_slots
-- The check a settle that ends a run (complete, retry, fail, release, suspend) makes first, while
-- any run of the queue has its cancel asked (meta `cx` counts them; at none it pays nothing): job
-- `id` active under lease token `token` with a cancel asked (its row's `cx`) ends cancelled here,
-- whatever its run's outcome (docs/design/job-controls.md): out of active, its group slot freed
-- (the doorbell rung when that made work claimable), `t` marked `<token>/x`. The settle's fence
-- then finds it no longer held and each_held answers it as cancelled. Passed to each_held as its
-- `ends`; the caller flushes the events.
-- It also gives back the run's concurrency keys (meta `ks`: its row's `ck`, includes/key_slots.lua):
-- the settle's shared tail (free_and_admit) frees them and readmits the jobs parked on them.
local function settle_cancelled(id, token)
  local meta = queue_meta()
  if not meta.cx and not meta.ks then return end
  local r = redis.call('HMGET', job_key(id), 's', 't', 'cx', 'g', 'dk', 'dt', 'fp', 'ck')
  if r[1] ~= 'active' or r[2] ~= token then return end
  if r[8] then key_slots().leave(r[8]) end
  if not r[3] then return end
  redis.call('ZREM', K_ACTIVE, id)
  if free_slot(r[4] or nil, 1) then ring_doorbell() end
  end_cancelled(id, r[4] or nil, r[3], now_ms(), token .. '/x', r[5], r[6], r[7], token)
end
