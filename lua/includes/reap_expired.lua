-- @include job_key
-- @include chunked
-- @include job_defaults
-- @include tally
-- @include bury
-- @include batch_push
-- @include free_and_admit
-- @include collect_event
-- @include queue_meta
-- @include end_cancelled
-- @include key_slots
-- Up to `limit` jobs whose lease ended by `now` leave the active set: back to their lane (or
-- pending) with their original order, or dead once their attempts are used up; their group
-- slots are freed. Returns requeued, buried (cancelled ones are neither), and whether work became claimable. The row keeps the
-- claim's bare token in `t` (no settle's mark, includes/settled_token.lua), so a late settle by
-- the holder it took the lease from is fenced off, never taken for a repeat of a settle that ran.
-- Collects a `stalled` event (j, g, a) per job, followed by its `dead` (x 'lease expired') when that
-- was its last attempt: the caller flushes. Adds the jobs reaped to meta `stalled` (the counter
-- /metrics shows), once a call. A job buried releases its until-finished dedupe key (bury). A job
-- whose cancel was asked (its `cx`, read once meta `cx` says any was) ends cancelled instead,
-- `t` marked `<token>/x` so its holder's late settle answers cancelled (includes/end_cancelled.lua).
local function reap_expired(now, limit)
  local ids = redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', now, 'LIMIT', 0, limit)
  if #ids == 0 then return 0, 0, false end
  chunked('ZREM', K_ACTIVE, ids)
  local requeued, buried, cancelled, freed = 0, 0, 0, { order = {} }
  local batch = { order = {} }
  local meta = queue_meta()
  -- a cancel's reason and the concurrency keys only in a queue that has them
  local fields = { 'a', 'g', 'm', 'z', 'o', 'dk', 'dt', 'fp', 't' }
  local cx_at, ck_at = nil, nil
  if meta.cx then
    fields[#fields + 1] = 'cx'
    cx_at = #fields
  end
  if meta.ks then
    fields[#fields + 1] = 'ck'
    ck_at = #fields
  end
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', job_key(id), unpack(fields))
    local cx, ck = cx_at and r[cx_at], ck_at and r[ck_at]
    if r[1] then
      tally(freed, r[2])
      if ck then key_slots().leave(ck) end
      local attempt = tonumber(r[1]) - (tonumber(r[4]) or 0)
      collect_event('stalled', id, 'g', r[2], 'a', attempt)
      if cx then
        end_cancelled(id, r[2] or nil, cx, now, (r[9] or '') .. '/x', r[6], r[7], r[8], r[9])
        cancelled = cancelled + 1
      elseif attempt >= (tonumber(r[3]) or DEFAULT_MAX_ATTEMPTS) then
        bury(id, 'lease expired', now, nil, r[6], r[7], r[8], r[9])
        collect_event('dead', id, 'g', r[2], 'a', attempt, 'x', 'lease expired')
        buried = buried + 1
      else
        redis.call('HSET', job_key(id), 's', 'pending')
        batch_push(batch, r[2], r[5], id)
        requeued = requeued + 1
      end
    end
  end
  if requeued + buried + cancelled > 0 then redis.call('HINCRBY', K_META, 'stalled', requeued + buried + cancelled) end
  return requeued, buried, free_and_admit(freed, batch)
end
