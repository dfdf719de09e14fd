--[[
  send-event: deliver an event to the jobs of this queue waiting for it (docs/design/steps.md,
  "Waiting for an event"), in one script: every job whose wait matches it resumes, its step
  recording the event's data, and it is kept for `keepMs` for waits that begin after it (a wait
  recorded a moment later than the event it was for still takes it).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the event's name (letters, digits and `._-`, checked by the caller)
  ARGV[3]  its data, JSON text
  ARGV[4]  its id for deduplication ('' for none): the same id again within a day (or keepMs,
           when longer) answers as the first send did and writes nothing
  ARGV[5]  keepMs (>= 0): how long it is kept for waits that begin later; 0 for none
  Derives  emq:{q}:shapes:<name>, emq:{q}:on:<name>:<hash>, emq:{q}:job:<id>, emq:{q}:steps:<id>,
           emq:{q}:awaiting, emq:{q}:kept:<name>, emq:{q}:keptd:<name> (the kept events: at most
           1000 of a name, the oldest dropped first), emq:{q}:evid:<name>:<id>, lanes
  Reply    {the event's id (the caller's, or its sequence number in the queue), jobs resumed}
  Events   `step` (j, g, n the step's name, s done) per job resumed, in one entry
  Errors   EMQARG (data that is not JSON, a malformed keepMs), before anything is written
  Rings    the doorbell when a resumed job is claimable now
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include step_key
-- @include event_match
-- @include resume_step
-- @include admit
-- @include ring_doorbell
-- @include collect_event
-- @include flush_events

local name, data, given, keep_ms = ARGV[2], ARGV[3], ARGV[4], arg_int(ARGV[5], 'keepMs', 0)
local ok, decoded = pcall(cjson.decode, data)
if not ok then error(redis.error_reply('EMQARG the event data is not JSON')) end
local seen_key = given ~= '' and PREFIX .. 'evid:' .. name .. ':' .. given or nil
if seen_key then
  local seen = redis.call('GET', seen_key)
  if seen then return cjson.decode(seen) end
end

local now = now_ms()
local seq = redis.call('HINCRBY', K_META, 'evseq', 1)
local seq_text = string.format('%d', seq)
local event_id = given ~= '' and given or seq_text
local batch = { order = {} }
local resumed = 0
for _, shape in ipairs(redis.call('SMEMBERS', shapes_key(name))) do
  local wk = waiters_key(name, match_hash(shape, values_at(decoded, shape)))
  local ids = redis.call('ZRANGE', wk, 0, -1)
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', job_key(id), 's', 'sw', 'g', 'o')
    if r[1] == 'awaiting' and r[2] and string.sub(r[2], 1, 1) == 'w' then
      resume_step(id, r[2], wk, { r[3], r[4] }, { s = 'done', r = data, ei = event_id, ft = now }, batch)
      redis.call('HSET', step_key(id), 'ev:' .. name, seq_text)
      resumed = resumed + 1
    else
      -- a waiter that is no longer one (removed, or its row another job's now)
      redis.call('ZREM', wk, id)
    end
  end
end
if keep_ms > 0 then
  local kept, kept_data = kept_key(name), kept_data_key(name)
  -- what is no longer kept goes first, then the oldest past 1000
  local gone = redis.call('ZRANGEBYSCORE', kept, '-inf', now)
  local over = redis.call('ZCARD', kept) - #gone - 999
  if over > 0 then
    local oldest = redis.call('ZRANGEBYSCORE', kept, now, '+inf')
    table.sort(oldest, function(a, b) return tonumber(a) < tonumber(b) end)
    for k = 1, over do gone[#gone + 1] = oldest[k] end
  end
  if #gone > 0 then
    redis.call('ZREM', kept, unpack(gone))
    redis.call('HDEL', kept_data, unpack(gone))
  end
  redis.call('SADD', PREFIX .. 'evnames', name)
  redis.call('ZADD', kept, now + keep_ms, seq_text)
  local arrivals = redis.call('HGET', K_META, 'seq') or '0'
  redis.call('HSET', kept_data, seq_text, event_id .. ' ' .. string.format('%d', now) .. ' ' .. arrivals .. ' ' .. data)
  local last = tonumber(redis.call('ZRANGE', kept, -1, -1, 'WITHSCORES')[2])
  redis.call('PEXPIREAT', kept, last)
  redis.call('PEXPIREAT', kept_data, last)
end
if admit(batch) then ring_doorbell() end
local reply = { event_id, resumed }
if seen_key then redis.call('SET', seen_key, cjson.encode(reply), 'PX', math.max(keep_ms, 86400000)) end
flush_events()
return reply
