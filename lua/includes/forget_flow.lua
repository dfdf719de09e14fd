-- @include kids_key
-- @include child_record
-- @include report_up
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (`state` not completed, dead or cancelled), or a
-- dead one its parent waits for (`onFailure: 'wait'`, policy `w`), tells its parent it is gone
-- (`fp` its row's `fp`; nil when its parent asked for the removal, or it has none),
-- and a parent (`fw` its row's `fw`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. `token`: the row's `t` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  local unfinished = state ~= 'completed' and state ~= 'dead' and state ~= 'cancelled'
  if fp and (unfinished or (state == 'dead' and string.sub(fp, -2) == '|w')) then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
