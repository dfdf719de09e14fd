-- @include events_settings
-- @include collect_event
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field `e`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
