-- @include job_key
-- The fence: the row of job `id` if it is active under lease token `attempt` (its attempts
-- count), else nil. Returns {attempts, group or false, max attempts, attempts base, backoff, score}.
local function hold(id, attempt)
  local r = redis.call('HMGET', job_key(id), 's', 'a', 'g', 'm', 'z', 'b', 'o')
  if r[1] ~= 'active' or tonumber(r[2]) ~= tonumber(attempt) then return nil end
  return { tonumber(r[2]), r[3], tonumber(r[4]), tonumber(r[5] or '0'), r[6], r[7] }
end
