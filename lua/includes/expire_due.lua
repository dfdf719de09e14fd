-- @include job_key
-- @include lane_key
-- @include fifo_key
-- @include leave_ring
-- @include chunked
-- @include bury
-- @include collect_event
-- @include key_slots
-- @include admit_credited
-- @include ring_doorbell
-- Expiry (docs/design/job-controls.md): the jobs whose expiry (the row's `xa`, indexed in
-- emq:{q}:expiring by it) has come by `now` and that never started go to dead with EMQEXPIRED: out
-- of their place (a lane, which leaves the ring when it empties; scheduled; a flow parent's
-- waiting), buried (includes/bury.lua: the dead counters, an until-finished dedupe key released,
-- a flow child's news to its parent, the dead retention) with a `dead` event. A job started since
-- (claimed: `a` above 0; a given-back claim is not counted) keeps running: its entry just leaves
-- the index, as does one whose row is gone or finished. At most `limit` entries a call; returns
-- whether it took `limit` (more may be due: the caller then claims nothing this call and rings the
-- doorbell, so no claim ever hands out a job past its expiry) and how many it buried.
-- Takes jobs `ids` out of ring entry `entry`'s lane: those in its zset by ZREM, those in its
-- arrivals list by LREM each when they are few, else by rewriting the list once (LREM scans the
-- list: many expired jobs behind many live ones cost their product, a rewrite the list's length),
-- then the entry leaves the ring if its lane emptied.
local function out_of_lanes(entry, ids)
  local scores = redis.call('ZMSCORE', lane_key(entry), unpack(ids))
  local zset, list = {}, {}
  for i, id in ipairs(ids) do
    if scores[i] then zset[#zset + 1] = id else list[#list + 1] = id end
  end
  chunked('ZREM', lane_key(entry), zset)
  local fifo = fifo_key(entry)
  if #list <= 8 then
    for _, id in ipairs(list) do redis.call('LREM', fifo, 1, id) end
  elseif #list > 0 then
    local drop = {}
    for _, id in ipairs(list) do drop[id] = true end
    local keep = {}
    for _, id in ipairs(redis.call('LRANGE', fifo, 0, -1)) do
      if not drop[id] then keep[#keep + 1] = id end
    end
    redis.call('DEL', fifo)
    chunked('RPUSH', fifo, keep)
  end
  leave_ring(entry)
end

local function expire_due(now, limit)
  local ids = redis.call('ZRANGEBYSCORE', PREFIX .. 'expiring', '-inf', string.format('%d', now), 'LIMIT', 0, limit)
  if #ids == 0 then return false, 0 end
  chunked('ZREM', PREFIX .. 'expiring', ids)
  local buried = 0
  -- the pending ones leave their lanes afterwards, lane by lane (out_of_lanes)
  local lanes = { order = {} }
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', job_key(id), 's', 'a', 'g', 'dk', 'dt', 'fp', 't', 'xa', 'ck')
    local state, group = r[1], r[3] or nil
    local due = (state == 'pending' or state == 'scheduled' or state == 'waiting') and (tonumber(r[2]) or 0) == 0 and tonumber(r[8] or '') and tonumber(r[8]) <= now
    if due then
      if state == 'pending' then
        local entry = group or UNGROUPED
        -- parked on a full concurrency key, or in its lane
        if r[9] and key_slots().unpark(id, r[9]) then
          -- parked on a key: out of its wait
        else
          -- out of its lane, giving back the room a key may have readmitted it with
          if r[9] then key_slots().credit(r[9]) end
          if not lanes[entry] then
            lanes[entry] = {}
            lanes.order[#lanes.order + 1] = entry
          end
          lanes[entry][#lanes[entry] + 1] = id
        end
      elseif state == 'scheduled' then
        redis.call('ZREM', K_SCHEDULED, id)
      else
        redis.call('ZREM', K_WAITING, id)
      end
      local err = 'EMQEXPIRED: not started by its expiry at ' .. r[8] .. ' (server ms)'
      bury(id, err, now, nil, r[4], r[5], r[6], r[7] or nil)
      collect_event('dead', id, 'g', group, 'a', 0, 'x', err)
      buried = buried + 1
    end
  end
  for _, entry in ipairs(lanes.order) do out_of_lanes(entry, lanes[entry]) end
  if admit_credited() then ring_doorbell() end
  if buried > 0 then redis.call('HINCRBY', K_META, 'expired', buried) end
  return #ids >= limit, buried
end
