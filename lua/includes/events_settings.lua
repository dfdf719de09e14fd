-- The queue's events settings, read once per script call (the first time an event is written) and
-- kept in these locals for the rest of it: meta `ecap`, the stream's MAXLEN as text (absent:
-- DEFAULT_EVENTS_CAP; '0': events off, nothing is written and the stream never exists), and meta
-- `erb`, the most bytes of a result a `completed` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local events_cap, event_result_bytes = nil, nil
local function events_settings()
  if not events_cap then
    local r = redis.call('HMGET', K_META, 'ecap', 'erb')
    events_cap = r[1] or DEFAULT_EVENTS_CAP
    event_result_bytes = tonumber(r[2]) or DEFAULT_EVENT_RESULT_BYTES
  end
  return events_cap, event_result_bytes
end
