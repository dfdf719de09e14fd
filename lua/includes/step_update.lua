-- @include step_key
-- Rewrite step `index` of job `id` (its record, JSON: n name, k kind, s state, r result as JSON
-- text, e error, a attempts, st and ft started and finished ms, u until ms, ev event, ei the
-- event's id, cq and ci an invoked child) with `fields` set on it (a value false deletes the
-- field). Returns the record as written, nil when the job has no such step. Only the records a
-- suspension or its end rewrite come through here (a sleep's, a wait's, an invoke's): a run
-- step's result is written whole by step.lua, never decoded by a script.
local function step_update(id, index, fields)
  local key = step_key(id)
  local text = redis.call('HGET', key, index)
  if not text then return nil end
  local record = cjson.decode(text)
  for f, v in pairs(fields) do
    if v == false then record[f] = nil else record[f] = v end
  end
  redis.call('HSET', key, index, cjson.encode(record))
  return record
end
