-- @include job_key
-- @include tally
-- @include batch_push
-- Concurrency keys (docs/design/job-controls.md, "Several concurrency keys"): a job's row names its
-- keys in `ck` ("org:7,plan:free"); emq:{q}:klimit holds each limited key's limit and
-- emq:{q}:kactive each key's running jobs (a count at 0 is deleted). A job a claim finds blocked by
-- a full key waits in that key's emq:{q}:kwait:<key> (score: its order), out of its lane, and
-- goes back to its lane when the key frees a slot. All of it only under meta `ks`.

-- The claim's view of the keys it meets, read once a key a call: key -> {limit or false, active}.
local key_seen = {}
-- keys whose count this claim raised, in first-seen order
local key_dirty = {}

local function key_state(k)
  local s = key_seen[k]
  if not s then
    s = { tonumber(redis.call('HGET', PREFIX .. 'klimit', k) or '') or false, tonumber(redis.call('HGET', PREFIX .. 'kactive', k) or '0') }
    key_seen[k] = s
  end
  return s
end

-- The first of `ck`'s keys at its limit, or nil when the job may start (then its keys are counted
-- taken, for key_write).
local function key_take(ck)
  for k in string.gmatch(ck, '[^,]+') do
    local s = key_state(k)
    if s[1] and s[2] >= s[1] then return k end
  end
  for k in string.gmatch(ck, '[^,]+') do
    local s = key_seen[k]
    if not s.dirty then
      s.dirty = true
      key_dirty[#key_dirty + 1] = k
    end
    s[2] = s[2] + 1
  end
  return nil
end

-- Writes the counts key_take raised, in one HSET.
local function key_write()
  if #key_dirty == 0 then return end
  local flat = {}
  for _, k in ipairs(key_dirty) do
    flat[#flat + 1] = k
    flat[#flat + 1] = string.format('%d', key_seen[k][2])
  end
  redis.call('HSET', PREFIX .. 'kactive', unpack(flat))
  key_dirty = {}
end

-- Parks job `id` (order `order`) on key `k`: out of the lanes until `k` frees a slot.
local function key_park(id, k, order)
  redis.call('ZADD', PREFIX .. 'kwait:' .. k, order, id)
end

-- Takes job `id` (keys `ck`) out of the key waits it is parked in; true when it was in one.
local function key_unpark(id, ck)
  local was = false
  for k in string.gmatch(ck, '[^,]+') do
    if redis.call('ZREM', PREFIX .. 'kwait:' .. k, id) == 1 then was = true end
  end
  return was
end

-- Whether job `id` (keys `ck`) is parked in one of its keys' waits.
local function key_parked(id, ck)
  for k in string.gmatch(ck, '[^,]+') do
    if redis.call('ZSCORE', PREFIX .. 'kwait:' .. k, id) then return true end
  end
  return false
end

-- The slots runs ending in this call give back: key -> count (tally).
local keys_freed = { order = {} }

-- A run of a job with keys `ck` ends: its keys' slots are given back by keys_free.
local function keys_leave(ck)
  for k in string.gmatch(ck, '[^,]+') do tally(keys_freed, k) end
end

-- Gives back the slots keys_leave counted: each key's count lowered (deleted at 0), and as many
-- jobs as it freed taken from its wait, oldest order first, into `batch` (made when nil) to go back
-- to their lanes (a job still blocked by another key parks again at its next claim). Returns batch.
local function keys_free(batch)
  if #keys_freed.order == 0 then return batch end
  batch = batch or { order = {} }
  for _, k in ipairs(keys_freed.order) do
    local c = keys_freed[k]
    if redis.call('HINCRBY', PREFIX .. 'kactive', k, -c) <= 0 then redis.call('HDEL', PREFIX .. 'kactive', k) end
    local parked = redis.call('ZPOPMIN', PREFIX .. 'kwait:' .. k, c)
    for i = 1, #parked, 2 do
      batch_push(batch, redis.call('HGET', job_key(parked[i]), 'g'), parked[i + 1], parked[i])
    end
  end
  keys_freed = { order = {} }
  return batch
end
