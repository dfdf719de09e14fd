-- @include job_key
-- @include tally
-- @include batch_push
-- @include queue_meta
-- @include now_ms
-- @include key_rate
-- @include log_starts
-- @include throttle
-- Concurrency keys (docs/design/job-controls.md, "Several concurrency keys"): a job's row names its
-- keys in `ck` ("org:7,plan:free"); emq:{q}:klimit holds each limited key's limit and
-- emq:{q}:kactive each key's running jobs (a count at 0 is deleted). A key may have a rate limit
-- too (emq:{q}:krate, meta `kr`: includes/key_rate.lua), its starts logged as a group's are. A job
-- a claim finds blocked by a key (at its limit, or at its rate) waits in that key's
-- emq:{q}:kwait:<key> (score: its order), out of its lane, and goes back to its lane when the key
-- frees a slot, or when a beat finds its rate lets one more start. All of it only under meta `ks`.
-- The functions and their state are made on a call's first use (`key_slots()`): a flattened
-- script runs every top-level definition on every call, and most calls never meet a key.
local key_slots_made = nil
local function key_slots()
  if key_slots_made then return key_slots_made end
  local K = {}
  -- the claim's view of the keys it meets, read once a key a call: key -> {limit or false, active,
  -- rate limit or false, rate period, starts in the window}; a key with a rate also keeps the
  -- tokens this call started (`tokens`) and whether a job waited for its rate (`rated`)
  local seen = {}
  -- keys whose count this claim raised, in first-seen order
  local dirty = {}
  -- keys whose rate turned a job away in this call, in first-seen order
  local rated = {}
  -- the slots runs ending in this call give back: key -> count (tally)
  local freed = { order = {} }
  -- the call's clock, for the rate windows: the one reading of the call (includes/now_ms.lua), which
  -- the claim's `now` is too
  local now = now_ms

  local function state(k)
    local s = seen[k]
    if not s then
      s = { tonumber(redis.call('HGET', PREFIX .. 'klimit', k) or '') or false, tonumber(redis.call('HGET', PREFIX .. 'kactive', k) or '0'), false, 0, 0 }
      if queue_meta().kr then
        local limit, period, used = key_rate(k, now())
        if limit then s[3], s[4], s[5], s.tokens = limit, period, used, {} end
      end
      seen[k] = s
    end
    return s
  end

  -- Whether key state `s` may start one more job: under its limit and its rate.
  local function has_room(s)
    return (not s[1] or s[2] < s[1]) and (not s[3] or s[5] < s[3])
  end

  -- The first of `ck`'s keys that holds the job back (at its limit or its rate), or nil when the
  -- job may start: then its keys are counted taken, for write, the job's lease token `token`
  -- logged as a start of each key with a rate.
  function K.take(ck, token)
    for k in string.gmatch(ck, '[^,]+') do
      local s = state(k)
      if s[1] and s[2] >= s[1] then return k end
      if s[3] and s[5] >= s[3] then
        if not s.rated then
          s.rated = true
          rated[#rated + 1] = k
        end
        return k
      end
    end
    for k in string.gmatch(ck, '[^,]+') do
      local s = seen[k]
      if not s.dirty then
        s.dirty = true
        dirty[#dirty + 1] = k
      end
      s[2] = s[2] + 1
      if s[3] then
        s[5] = s[5] + 1
        s.tokens[#s.tokens + 1] = token
      end
    end
    return nil
  end

  -- Writes the counts take raised, in one HSET, and the starts of the keys with a rate; a key
  -- whose rate turned a job away is throttled until one more start fits in its window, for a
  -- beat to readmit its waiting jobs then (includes/readmit_due.lua, reopen).
  function K.write()
    if #dirty > 0 then
      local flat = {}
      for _, k in ipairs(dirty) do
        local s = seen[k]
        flat[#flat + 1] = k
        flat[#flat + 1] = string.format('%d', s[2])
        if s[3] then log_starts(KEY_MARK .. k, s.tokens, s[4], now()) end
      end
      redis.call('HSET', PREFIX .. 'kactive', unpack(flat))
      dirty = {}
    end
    for _, k in ipairs(rated) do
      local s = seen[k]
      throttle(KEY_MARK .. k, key_rate_due(k, s[3], s[4], s[5], 0, now()))
      redis.call('HINCRBY', K_META, 'rated', 1)
    end
    rated = {}
  end

  -- jobs this call takes back from keys' waits (see credit), for readmit
  local credited = nil

  -- Job `id` (keys `ck`) may have been readmitted by one of its keys freeing a slot (or a raised
  -- limit, or its rate's window): it leaves without starting (parked on another key, removed,
  -- cancelled or expired from its lane), so it gives that room back: each of its keys but `but`
  -- with room readmits one job of its own wait. Without it a job of such a key could wait for good
  -- on a key that runs nothing.
  function K.credit(ck, but)
    for k in string.gmatch(ck, '[^,]+') do
      if k ~= but and has_room(state(k)) then
        local next_parked = redis.call('ZPOPMIN', PREFIX .. 'kwait:' .. k, 1)
        if next_parked[1] then
          credited = credited or { order = {} }
          batch_push(credited, redis.call('HGET', job_key(next_parked[1]), 'g'), next_parked[2], next_parked[1])
        end
      end
    end
  end

  -- Parks job `id` (order `order`, keys `ck`) on key `full`: out of the lanes until `full` has
  -- room again. It gives back the room another key may have readmitted it with (credit).
  function K.park(id, full, order, ck)
    redis.call('ZADD', PREFIX .. 'kwait:' .. full, order, id)
    K.credit(ck, full)
  end

  -- The jobs credit took back from keys' waits, to go back to their lanes (admit); nil for none.
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
  -- as it freed (fewer when its rate has less room: the key is then throttled while jobs wait)
  -- taken from its wait, oldest order first, into `batch` (made when nil) to go back to their
  -- lanes (a job still blocked by another key parks again at its next claim).
  function K.free(batch)
    if #freed.order == 0 then return batch end
    batch = batch or { order = {} }
    for _, k in ipairs(freed.order) do
      local c = freed[k]
      if redis.call('HINCRBY', PREFIX .. 'kactive', k, -c) <= 0 then redis.call('HDEL', PREFIX .. 'kactive', k) end
      local wait = PREFIX .. 'kwait:' .. k
      if queue_meta().kr then c = key_rate_cap(k, c, wait, now()) end
      local parked = c > 0 and redis.call('ZPOPMIN', wait, c) or {}
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
