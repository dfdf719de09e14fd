-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name `event`, the job `id` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- `l`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (`event_fields`) with where each one starts
-- (`event_starts`), and the pairs are named parameters, not `...`: a batch of a thousand events
-- costs appends, not a table an event.
-- @include queue_meta
local event_fields, event_starts = {}, {}
-- whether events are off (meta `ecap` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
