-- @include job_key
-- @include job_defaults
-- The fence: the row of job `id` if it is active under lease token `token` (its `t`), else nil
-- and the row's state and `t` (false when absent), for each_held's repeat check.
-- Returns {attempts, group or false, max attempts, attempts base, backoff, order score, dedupe key
-- `dk` or false, its ttl `dt` or false, a flow child's parent `fp` or false}, the defaults filled in for an absent `m` or `b`; an
-- active row always has its order (claim wrote it).
local function hold(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'a', 'g', 'm', 'z', 'b', 'o', 'dk', 'dt', 'fp')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return { tonumber(r[3]), r[4], tonumber(r[5]) or DEFAULT_MAX_ATTEMPTS, tonumber(r[6] or '0'), r[7] or DEFAULT_BACKOFF, r[8], r[9], r[10], r[11] }
end
