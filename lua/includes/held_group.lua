-- @include job_key
-- The fence for a settle that needs nothing else of the row (complete, extend): whether job `id`
-- is active under lease token `token`. Returns its group ('' for none) when it is, else nil and
-- the row's state and `t` (false when absent), for each_held's repeat check.
-- Reads three fields where hold reads eight: a completing batch pays per job for every one.
local function held_group(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'g')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return r[3] or ''
end
