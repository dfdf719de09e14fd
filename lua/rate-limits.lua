--[[
  rate-limits: the queue's rate limits, holds and throttled entries, for a reader (stats, the HTTP
  API, the dashboard).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the most throttled entries to answer (>= 0), earliest first
  Derives  emq:{q}:grate, emq:{q}:holds
  Reply    {now, queue rate "limit:periodMs" or "", {group, "limit:periodMs", ...},
           {entry, until, held until or "", ...}} where an entry is a group, "*" (ungrouped work)
           or "!" (the queue) and `until` when it may start again as the throttle has it (a
           concurrency key's entry, '#<key>', is left out: key-limits answers it)
  Errors   EMQARG
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms

local limit = arg_int(ARGV[2], 'limit', 0)
local throttled = {}
-- a page at a time, leaving out the concurrency keys' entries ('#<key>': key-limits shows them),
-- so many keys throttled crowd out no group
local from, listed = 0, 0
while listed < limit do
  local pairs_ = redis.call('ZRANGE', K_THROTTLED, from, from + limit - 1, 'WITHSCORES')
  for i = 1, #pairs_, 2 do
    if listed < limit and string.sub(pairs_[i], 1, 1) ~= KEY_MARK then
      throttled[#throttled + 1] = pairs_[i]
      throttled[#throttled + 1] = pairs_[i + 1]
      throttled[#throttled + 1] = redis.call('HGET', K_HOLDS, pairs_[i]) or ''
      listed = listed + 1
    end
  end
  if #pairs_ < 2 * limit then break end
  from = from + limit
end
return { now_ms(), redis.call('HGET', K_META, 'rate') or '', redis.call('HGETALL', K_GRATE), throttled }
