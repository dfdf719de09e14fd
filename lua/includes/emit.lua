-- @include collect_event
-- @include flush_events
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end
