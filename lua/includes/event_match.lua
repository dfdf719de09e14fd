-- Where durable waits for events meet the events (docs/design/steps.md, "Waiting for an event").
-- A wait's match is a shape, its paths into the event's data joined by newlines (sorted: '' for
-- none), and the values the data must have there. Waiters of `event` whose match hashes to h are
-- in the zset waiters_key(event, h) (score: when they began); the shapes waiters of `event` use
-- are in the set shapes_key(event), so a sent event is hashed once per shape, never compared
-- with each waiter. Kept events (a send's `keepMs`, for waits that begin after it) are in
-- kept_key(event) (a zset: member the event's sequence number, score when it stops being kept)
-- and kept_data_key(event) (a hash: sequence number -> "<event id> <sent ms> <arrivals> <data JSON>",
-- arrivals the queue's arrival sequence, meta `seq`, when it was sent: what orders it against a job
-- created in the same ms).
local function waiters_key(event, hash)
  return PREFIX .. 'on:' .. event .. ':' .. hash
end
local function shapes_key(event)
  return PREFIX .. 'shapes:' .. event
end
local function kept_key(event)
  return PREFIX .. 'kept:' .. event
end
local function kept_data_key(event)
  return PREFIX .. 'keptd:' .. event
end
-- The hash of a match: its shape and its values (a Lua array) encoded by cjson, the same encoder
-- for a waiter's values (decoded from the caller's JSON) and for a sent event's (read from its
-- data), so 1 and 1.0 are one value.
local function match_hash(shape, values)
  return redis.sha1hex(shape .. '\n' .. cjson.encode(values))
end
-- The values at `shape`'s paths in decoded `data` (each path its object keys joined by dots):
-- cjson.null where the data has no scalar there, which no waiter's value equals.
local function values_at(data, shape)
  local out = {}
  if shape == '' then return out end
  for path in string.gmatch(shape, '[^\n]+') do
    local v = data
    for part in string.gmatch(path, '[^.]+') do
      if type(v) == 'table' then v = v[part] else v = nil end
    end
    if v == nil or type(v) == 'table' then v = cjson.null end
    out[#out + 1] = v
  end
  return out
end
