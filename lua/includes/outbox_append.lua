-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. `outbox_append(entry, now)` adds an entry (score: when) and keeps it in `outbox_written`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: `u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>`
-- (a child's outcome, for its parent: includes/report_up.lua), `r|<parent queue>|<parent
-- id>|<child queue>|<child id>` (a removed parent's unfinished child, to remove) and `k|...` in
-- the same shape (a cancelled parent's unfinished child, to cancel: lua/cancel.lua).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
