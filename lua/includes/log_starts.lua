-- @include starts_key
-- @include chunked
-- Record in `entry`'s starts log that the jobs with lease tokens `tokens` (numbers) started at
-- `now`; the log expires a period after its newest start, when none of it counts any more.
local function log_starts(entry, tokens, period, now)
  if #tokens == 0 then return end
  local key, at, args = starts_key(entry), string.format('%d', now), {}
  for _, t in ipairs(tokens) do
    args[#args + 1] = at
    args[#args + 1] = string.format('%d', t)
  end
  chunked('ZADD', key, args)
  redis.call('PEXPIRE', key, string.format('%d', period))
end
