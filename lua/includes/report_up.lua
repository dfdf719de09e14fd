-- @include outbox_append
-- A flow child's news for its parent, appended to this queue's outbox: job `id`, whose row's `fp`
-- is `fp` (`<parent queue>|<parent id>|<policy>`), ended its run under lease token `token` (a
-- row's `t`, marks such as `7/r3` read as 7; nil for none) as `kind`: `c` completed (`body` its
-- result JSON, '' none), `d` dead (`body` its error), `p` back to be run (reprocessed), `x` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
