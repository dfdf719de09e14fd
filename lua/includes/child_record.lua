-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- `<token>|<kind>|<body>`, the token of the child's run the news is about and what became of it:
-- `w` not finished yet (written with the parent, token 0), `p` back to be run (reprocessed), `c`
-- completed (body: its result), `d` failed and counted (body: its error), `f` failed and failed
-- the parent, `k` failed and not counted (`onFailure: 'wait'`: the parent waits until it is
-- reprocessed and finishes; body: its error), `x` gone from a parent not yet written. News about
-- a later run (a higher token) replaces a record, and at the same token `p` replaces `c`, `d`,
-- `f` and `k`, and `x` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, k = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record `old` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
