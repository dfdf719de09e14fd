-- @include job_key
-- @include queue_meta
-- @include next_times
-- @include kids_key
-- @include claimed_job
-- @include step_key
-- A claim sent again (its reply was lost and the client repeated the request): the jobs the first
-- claim handed out, from its record `seen` (a JSON list id, token, id, token, ...), each still
-- held under that token, in claim_reply's shape. A job whose lease has lapsed or been settled
-- since is left out (its holder is fenced anyway). The lease of each job answered is renewed to
-- now + lease_ms, the deadline its holder reckons from this reply. The reply carries the next times.
local function replay_claim(seen, now, lease_ms)
  local held = cjson.decode(seen)
  local reply = { {} }
  for i = 1, #held, 2 do
    local id, token = held[i], held[i + 1]
    local r = redis.call('HMGET', job_key(id), 's', 't', 'd', 'g', 'a', 'z', 'm', 'c', 'x', 'fp', 'fw', 'sn', 'to')
    if r[1] == 'active' and r[2] == token then
      local runs = (tonumber(r[5]) or 0) - (tonumber(r[6]) or 0)
      local kids = false
      if r[11] then kids = redis.call('HGETALL', kids_key(id)) end
      local steps = r[12] and redis.call('HGETALL', step_key(id)) or false
      reply[#reply + 1] = claimed_job(id, token, r[4] or '', runs, r[7], r[8], r[9], r[10], r[3], kids, steps, r[13])
      redis.call('ZADD', K_ACTIVE, 'XX', now + lease_ms, id)
    end
  end
  local due_at, next_lease = next_times()
  reply[1] = { now, queue_meta().paused and 1 or 0, due_at, next_lease, 0, 0, 0 }
  return reply
end
