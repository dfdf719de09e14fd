-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name `event`, the job `id` (nil for an event of the queue or a group), then field-value
-- pairs, each left out when its value is nil or false ('' is a value: a lifted limit's `l`). The
-- field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt, d due
-- ms, x error, r result, rt result left out, p progress, l limit, n count, s state. Values go to
-- Redis as given: pass numbers as text (string.format('%d')), as a Lua number past 14 digits
-- would be written in exponent form.
-- The events of one call are kept in one flat list (`event_fields`) with where each one starts
-- (`event_starts`), so a batch of a thousand costs a thousand appends, not a thousand tables.
local event_fields, event_starts = {}, {}
local function collect_event(event, id, ...)
  local n = #event_fields
  event_starts[#event_starts + 1] = n + 1
  event_fields[n + 1] = 'e'
  event_fields[n + 2] = event
  n = n + 2
  if id then
    event_fields[n + 1] = 'j'
    event_fields[n + 2] = id
    n = n + 2
  end
  local count = select('#', ...)
  if count == 0 then return end
  local pairs_ = { ... }
  for i = 1, count, 2 do
    local value = pairs_[i + 1]
    if value then
      event_fields[n + 1] = pairs_[i]
      event_fields[n + 2] = value
      n = n + 2
    end
  end
end
