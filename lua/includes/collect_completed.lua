-- @include events_settings
-- @include collect_event
-- Collect the `completed` event of job `id` (group nil for none, this run's attempt) with
-- its result, JSON text or nil for none: carried as `r` when it is at most the queue's `erb`
-- bytes, else left out and `rt` = '1' set (a reader gets it from the row).
local function collect_completed(id, group, attempt, result)
  local r, rt = result, nil
  if result then
    local _, limit = events_settings()
    if #result > limit then r, rt = nil, '1' end
  end
  collect_event('completed', id, 'g', group, 'a', attempt, 'r', r, 'rt', rt)
end
