-- @include queue_meta
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta `ecap`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta `erb`, the most bytes of a result a
-- `completed` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
