-- @include job_key
-- @include queue_meta
-- The fence of complete: whether job `id` is active under lease token `token`. Returns {group or
-- nil, this run's attempt (`a - z`), its dedupe key `dk` or false, its key's ttl `dt` or false,
-- a flow child's parent `fp` or false, a flow parent's `fw` or false} when it is, for the settle,
-- its `completed` event, the key it releases (release_settled) and its flow links, else nil and
-- the row's state and `t` (false when absent), for each_held's repeat check. Reads the row in one
-- HMGET, its dedupe and flow fields only when the queue ever had them (includes/queue_meta.lua):
-- a completing batch pays per job for every field it asks for, there or not.
local function held_run(id, token)
  local meta, r = queue_meta(), nil
  if meta.dd or meta.fl then
    r = redis.call('HMGET', job_key(id), 's', 't', 'g', 'a', 'z', 'dk', 'dt', 'fp', 'fw')
  else
    r = redis.call('HMGET', job_key(id), 's', 't', 'g', 'a', 'z')
  end
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return { r[3] or nil, (tonumber(r[4]) or 0) - (tonumber(r[5]) or 0), r[6] or false, r[7] or false, r[8] or false, r[9] or false }
end
