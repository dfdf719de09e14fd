-- The `t` a settle leaves in the row it moves out of active: the holder's lease token, '/', then
-- what the settle did, `what`: the script's letter and its reply code ('r1' retried for later,
-- 'r2' retried now, 'r3' buried by retry, 'f1' failed, 'g1' given back). A claim writes a bare
-- token and no other script writes a mark, so the mark says that this very settle ran: a repeat
-- of it (its reply lost, the request sent again) answers as it did and writes nothing
-- (includes/repeat_code.lua), where a holder whose lease the reaper took finds its token bare.
local function settled_token(token, what)
  return token .. '/' .. what
end
