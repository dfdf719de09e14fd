-- @include job_key
-- @include tally
-- @include batch_push
-- Concurrency keys (docs/design/job-controls.md, "Several concurrency keys"): a job's row names its
-- keys in `ck` ("org:7,plan:free"); emq:{q}:klimit holds each limited key's limit and
-- emq:{q}:kactive each key's running jobs (a count at 0 is deleted). A job a claim finds blocked by
-- a full key waits in that key's emq:{q}:kwait:<key> (score: its order), out of its lane, and
-- goes back to its lane when the key frees a slot. All of it only under meta `ks`.
-- The functions and their state are made on a call's first use (`key_slots()`): a flattened
-- script runs every top-level definition on every call, and most calls never meet a key.
local key_slots_made = nil
local function key_slots()
  if key_slots_made then return key_slots_made end
  local K = {}
  -- the claim's view of the keys it meets, read once a key a call: key -> {limit or false, active}
  local seen = {}
  -- keys whose count this claim raised, in first-seen order
  local dirty = {}
  -- the slots runs ending in this call give back: key -> count (tally)
  local freed = { order = {} }

  local function state(k)
    local s = seen[k]
    if not s then
      s = { tonumber(redis.call('HGET', PREFIX .. 'klimit', k) or '') or false, tonumber(redis.call('HGET', PREFIX .. 'kactive', k) or '0') }
      seen[k] = s
    end
    return s
  end

  -- The first of `ck`'s keys at its limit, or nil when the job may start (then its keys are
  -- counted taken, for write).
  function K.take(ck)
    for k in string.gmatch(ck, '[^,]+') do
      local s = state(k)
      if s[1] and s[2] >= s[1] then return k end
    end
    for k in string.gmatch(ck, '[^,]+') do
      local s = seen[k]
      if not s.dirty then
        s.dirty = true
        dirty[#dirty + 1] = k
      end
      s[2] = s[2] + 1
    end
    return nil
  end

  -- Writes the counts take raised, in one HSET.
  function K.write()
    if #dirty == 0 then return end
    local flat = {}
    for _, k in ipairs(dirty) do
      flat[#flat + 1] = k
      flat[#flat + 1] = string.format('%d', seen[k][2])
    end
    redis.call('HSET', PREFIX .. 'kactive', unpack(flat))
    dirty = {}
  end

  -- jobs this claim takes back from other keys' waits (see park), for readmit
  local credited = nil

  -- Parks job `id` (order `order`, keys `ck`) on key `full`: out of the lanes until `full` frees
  -- a slot. The job may have been readmitted by another of its keys freeing a slot (or a raised
  -- limit): parked here, it gives that room back, so each of its other keys with room readmits
  -- one job of its own wait. Without it a job of such a key could wait for good on a key that runs
  -- nothing (the job readmitted in its stead removed, cancelled or expired while parked here).
  function K.park(id, full, order, ck)
    redis.call('ZADD', PREFIX .. 'kwait:' .. full, order, id)
    for k in string.gmatch(ck, '[^,]+') do
      if k ~= full then
        local s = state(k)
        if not s[1] or s[2] < s[1] then
          local next_parked = redis.call('ZPOPMIN', PREFIX .. 'kwait:' .. k, 1)
          if next_parked[1] then
            credited = credited or { order = {} }
            batch_push(credited, redis.call('HGET', job_key(next_parked[1]), 'g'), next_parked[2], next_parked[1])
          end
        end
      end
    end
  end

  -- The jobs park took back from other keys' waits, to go back to their lanes (admit); nil for none.
  function K.readmits()
    local b = credited
    credited = nil
    return b
  end

  -- Takes job `id` (keys `ck`) out of the key waits it is parked in; true when it was in one.
  function K.unpark(id, ck)
    local was = false
    for k in string.gmatch(ck, '[^,]+') do
      if redis.call('ZREM', PREFIX .. 'kwait:' .. k, id) == 1 then was = true end
    end
    return was
  end

  -- Whether job `id` (keys `ck`) is parked in one of its keys' waits.
  function K.parked(id, ck)
    for k in string.gmatch(ck, '[^,]+') do
      if redis.call('ZSCORE', PREFIX .. 'kwait:' .. k, id) then return true end
    end
    return false
  end

  -- A run of a job with keys `ck` ends: its keys' slots are given back by free.
  function K.leave(ck)
    for k in string.gmatch(ck, '[^,]+') do tally(freed, k) end
  end

  -- Gives back the slots leave counted: each key's count lowered (deleted at 0), and as many jobs
  -- as it freed taken from its wait, oldest order first, into `batch` (made when nil) to go back
  -- to their lanes (a job still blocked by another key parks again at its next claim).
  function K.free(batch)
    if #freed.order == 0 then return batch end
    batch = batch or { order = {} }
    for _, k in ipairs(freed.order) do
      local c = freed[k]
      if redis.call('HINCRBY', PREFIX .. 'kactive', k, -c) <= 0 then redis.call('HDEL', PREFIX .. 'kactive', k) end
      local parked = redis.call('ZPOPMIN', PREFIX .. 'kwait:' .. k, c)
      for i = 1, #parked, 2 do
        batch_push(batch, redis.call('HGET', job_key(parked[i]), 'g'), parked[i + 1], parked[i])
      end
    end
    freed = { order = {} }
    return batch
  end

  key_slots_made = K
  return K
end

-- The settles' shared tail (free_and_admit): the slots this call's runs gave back, and the jobs
-- parked on them into `batch`; nothing (and `batch` as it was) when no run named a key.
local function keys_free(batch)
  if not key_slots_made then return batch end
  return key_slots_made.free(batch)
end
