-- @include job_key
-- @include lane_key
-- @include fifo_key
-- @include leave_ring
-- @include admit_one
-- @include ring_sched_bell
-- @include dedupe_key
-- @include collect_event
-- Debounce (docs/design.md, "Deduplication"): job `id`, named by deduplication key `k`, takes the
-- payload and due time (`due`; at most `now`: claimable now) of a later enqueue with that key,
-- when it has not started: pending or scheduled and never claimed (no lease token `t`: a retried,
-- released or reprocessed job has one). It keeps its id, group and order, and with them its
-- priority, attempts, backoff and traceparent. Pending and claimable now, it stays where it waits;
-- given a delay, it leaves its lane (and the ring, when that emptied it) for scheduled; scheduled,
-- it takes the new due time, or goes back to its lane at its order when claimable now. The key's
-- window becomes the later enqueue's: `ttl` ms from now (text; the key's PX set again), or until
-- finished (`ttl` nil). Rings the schedule bell when the job becomes the earliest scheduled one, and
-- collects a `replaced` event (j, g, and d its due time when scheduled). Returns false, writing
-- nothing, when the job has started or its row is gone (a ttl key outlives a row deleted at
-- completion); else true, and whether it became claimable now (the caller rings the doorbell).
local function replace_job(id, payload, due, now, k, ttl)
  local key = job_key(id)
  local r = redis.call('HMGET', key, 's', 't', 'g', 'o', 'dt')
  local state = r[1]
  if r[2] or (state ~= 'pending' and state ~= 'scheduled') then return false, false end
  local group = r[3] or nil
  local entry = group or UNGROUPED
  local due_text = nil
  if due > now then due_text = string.format('%d', due) end
  local row = { 'd', payload }
  if ttl then
    row[#row + 1] = 'dt'
    row[#row + 1] = ttl
  elseif r[5] then
    redis.call('HDEL', key, 'dt')
  end
  local claimable = false
  if state == 'pending' and due_text then
    -- a job in an arrivals list has its order in its row; one in the zset may have it only as
    -- its score (a priority given at enqueue)
    local order = r[4] or redis.call('ZSCORE', lane_key(entry), id)
    if redis.call('ZREM', lane_key(entry), id) == 0 then redis.call('LREM', fifo_key(entry), 1, id) end
    leave_ring(entry)
    row[#row + 1] = 's'
    row[#row + 1] = 'scheduled'
    row[#row + 1] = 'o'
    row[#row + 1] = string.format('%d', tonumber(order))
    redis.call('ZADD', K_SCHEDULED, due_text, id)
  elseif state == 'scheduled' and due_text then
    redis.call('ZADD', K_SCHEDULED, due_text, id)
  elseif state == 'scheduled' then
    -- back in its place: a scheduled row carries its order
    redis.call('ZREM', K_SCHEDULED, id)
    row[#row + 1] = 's'
    row[#row + 1] = 'pending'
  end
  redis.call('HSET', key, unpack(row))
  if state == 'scheduled' and not due_text then claimable = admit_one(entry, r[4], id) end
  if due_text then ring_sched_bell({ [id] = true }) end
  -- a key that stays until finished already names the job with no TTL
  if ttl then
    redis.call('SET', dedupe_key(k), id, 'PX', ttl)
  elseif r[5] then
    redis.call('SET', dedupe_key(k), id)
  end
  collect_event('replaced', id, 'g', group, 'd', due_text)
  return true, claimable
end
