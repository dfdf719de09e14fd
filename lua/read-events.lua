--[[
  read-events: a page of the queue's events stream, oldest first, after an entry id. An entry is
  the events of one script call, each starting with its field `e` (docs/design.md, "Events"), and
  a page never splits one: it takes whole entries while their events fit in `limit`, and at least
  one (an entry holds at most 500 events), so a reader resumes after the last entry id it read.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  after: an entry id `<ms>-<seq>` (exclusive), or "0" for the start of the stream
  ARGV[3]  limit (1 to 1000): the most events, but at least one entry
  Reply    { {id, {field, value, ...}}, ... } the entries as XRANGE gives them, oldest first
  Errors   EMQARG (a malformed after or limit), before anything is read
]]
-- @include keyspace
-- @include arg_int

local after = ARGV[2]
if after ~= '0' and not string.match(after, '^%d+%-%d+$') then
  error(redis.error_reply('EMQARG after must be an event id <ms>-<seq> or 0, got ' .. tostring(after)))
end
local limit = arg_int(ARGV[3], 'limit', 1)
if limit > 1000 then error(redis.error_reply('EMQARG limit must be at most 1000, got ' .. ARGV[3])) end

local page, events = {}, 0
local start = after == '0' and '-' or '(' .. after
while events < limit do
  -- a few entries a read: an entry may hold hundreds of events, and the page stops inside a read
  local want = math.min(limit - events, 100)
  local entries = redis.pcall('XRANGE', K_EVENTS, start, '+', 'COUNT', want)
  -- the greatest id there is: nothing can follow it
  if entries.err and string.find(entries.err, 'invalid start ID for the interval', 1, true) then return page end
  if entries.err then
    error(redis.error_reply('EMQARG after must be an event id <ms>-<seq> or 0, got ' .. after .. ' (' .. entries.err .. ')'))
  end
  for _, entry in ipairs(entries) do
    local fields, count = entry[2], 0
    for i = 1, #fields, 2 do
      if fields[i] == 'e' then count = count + 1 end
    end
    if #page > 0 and events + count > limit then return page end
    page[#page + 1] = entry
    events = events + count
    start = '(' .. entry[1]
  end
  if #entries < want then break end
end
return page
