-- @include rare_fields
-- @include write_row
-- @include batch_push
-- @include batch_append
-- @include collect_event
-- Write a new job's row and collect it where it goes: the arrivals list of its lane (claimable
-- now at the default priority), its lane's zset (claimable now with a priority), or `later`
-- (due at `due` > now: `later.scores` the ZADD arguments for K_SCHEDULED, `later.ids` a set).
-- `key` is its row's key, `seq` its arrival sequence number, `group` '' for none, `priority`,
-- `max_attempts` and `backoff` as enqueue takes them (text; `priority` a number), `traceparent`
-- nil for none, `dedupe` the deduplication key it takes (nil for none: the caller writes the key
-- itself) and `dedupe_ttl` that key's window in ms, text (nil: until the job finishes), kept in
-- the row as `dk` and `dt`, `parent` a flow child's parent (`<queue>|<id>|<policy>`, kept as `fp`;
-- nil for none). Collects its event (`added` j, g, and `k`, `d` when `fired_by` names
-- the scheduler that fired it for slot `slot`; `scheduled` j, g, d). Returns its state.
local function add_job(batch, later, key, id, payload, group, priority, max_attempts, backoff, seq, due, now, now_text, traceparent, fired_by, slot, dedupe, dedupe_ttl, parent)
  local order = priority * 4294967296 + (seq % 4294967296)
  local state = 'pending'
  if due > now then state = 'scheduled' end
  -- a scheduled job is in no lane until promoted: its row keeps the order meanwhile; a job at the
  -- default priority goes to its arrivals list, whose order is its members' rows' `o`
  local fresh = state == 'pending' and priority == 0
  local order_text = nil
  if state == 'scheduled' or fresh then order_text = string.format('%d', order) end
  local rare = rare_fields(max_attempts, backoff, priority, traceparent, parent)
  if dedupe then
    rare = rare or {}
    rare[#rare + 1] = 'dk'
    rare[#rare + 1] = dedupe
    if dedupe_ttl then
      rare[#rare + 1] = 'dt'
      rare[#rare + 1] = dedupe_ttl
    end
  end
  write_row(key, state, payload, now_text, order_text, group, rare)
  local event_group = group ~= '' and group or nil
  if state == 'scheduled' then
    local due_text = string.format('%d', due)
    later.scores[#later.scores + 1] = due_text
    later.scores[#later.scores + 1] = id
    later.ids[id] = true
    collect_event('scheduled', id, 'g', event_group, 'd', due_text)
  else
    if fresh then
      batch_append(batch, group, id)
    else
      batch_push(batch, group, order, id)
    end
    collect_event('added', id, 'g', event_group, 'k', fired_by, 'd', slot)
  end
  return state
end
