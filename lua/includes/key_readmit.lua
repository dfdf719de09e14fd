-- @include key_rate
-- @include queue_meta
-- @include batch_push
-- @include job_key
-- @include admit
-- Key k's parked jobs go back to their lanes in their order (emq:{q}:kwait:<k>, lowest first), as
-- many as it has room for now: its limit less its running jobs (all of them without a limit),
-- capped by its rate (key_rate_cap, which throttles k while its rate leaves jobs waiting). A key
-- with no room under its limit readmits nothing: a run of it ends first, and frees them
-- (key_slots' free). Returns how many went back, and whether work became claimable (the caller
-- rings the doorbell).
local function key_readmit(k, now)
  local wait = PREFIX .. 'kwait:' .. k
  local c = redis.call('ZCARD', wait)
  if c == 0 then return 0, false end
  local limit = tonumber(redis.call('HGET', PREFIX .. 'klimit', k) or '')
  if limit then c = math.min(c, math.max(0, limit - tonumber(redis.call('HGET', PREFIX .. 'kactive', k) or '0'))) end
  if c > 0 and queue_meta().kr then c = key_rate_cap(k, c, wait, now) end
  if c == 0 then return 0, false end
  local parked = redis.call('ZPOPMIN', wait, c)
  local batch = { order = {} }
  for i = 1, #parked, 2 do
    batch_push(batch, redis.call('HGET', job_key(parked[i]), 'g'), parked[i + 1], parked[i])
  end
  return #parked / 2, admit(batch)
end
