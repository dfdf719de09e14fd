--[[
  list-groups: one page of the queue's groups (emq:{q}:groups: every group that ever had a lane),
  each with its numbers, for a reader (the HTTP API, the dashboard, `emq groups`). A walk by SSCAN:
  a group may come again on a later page (the set was rehashed meanwhile), and one added during the
  walk may come or not. SSCAN is asked again (COUNT `count`) while the page holds fewer than `count`
  groups, at most 10 times: a prefix few groups match still fills its pages, and a page never
  scans more than about 10 * `count` members. A small set (listpack or intset) comes whole at once.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the SSCAN cursor: "0" to start, else the one the page before answered
  ARGV[3]  count (1 to 1000): SSCAN's COUNT, about the most groups a page holds
  ARGV[4]  a group name prefix, "" for every group: letters, digits and `._-` (no glob character,
           so MATCH `<prefix>*` needs no escaping)
  Derives  emq:{q}:grate, emq:{q}:holds, emq:{q}:lane:<group>, emq:{q}:fifo:<group>
  Reply    {next cursor ("0": the walk is done), {group, active, limit, rate, paused, held until,
           throttled until, lane zset size, arrivals list size}, ...}, the rows sorted by name;
           active "0" when none is counted; limit, rate ("limit:periodMs"), held until and throttled
           until "" for none; paused 1 or 0
  Errors   EMQARG
]]
-- @include keyspace
-- @include arg_int
-- @include lane_size

local cursor = ARGV[2]
-- a cursor Redis would refuse with its own error (an unsigned 64-bit integer)
if not string.match(cursor, '^%d+$') or #cursor > 20 or (#cursor == 20 and cursor > '18446744073709551615') then
  error(redis.error_reply('EMQARG cursor must be a cursor a page answered, got ' .. cursor))
end
local count = arg_int(ARGV[3], 'count', 1)
if count > 1000 then error(redis.error_reply('EMQARG count must be an integer from 1 to 1000, got ' .. ARGV[3])) end
local name_prefix = ARGV[4]
if not string.match(name_prefix, '^[%w._-]*$') or #name_prefix > 128 then
  error(redis.error_reply('EMQARG prefix must be up to 128 letters, digits, ., _ or -, got ' .. name_prefix))
end

local names, seen = {}, {}
for _ = 1, 10 do
  local scan
  if name_prefix == '' then
    scan = redis.call('SSCAN', K_GROUPS, cursor, 'COUNT', count)
  else
    scan = redis.call('SSCAN', K_GROUPS, cursor, 'MATCH', name_prefix .. '*', 'COUNT', count)
  end
  cursor = scan[1]
  for _, g in ipairs(scan[2]) do
    if not seen[g] then
      seen[g] = true
      names[#names + 1] = g
    end
  end
  if cursor == '0' or #names >= count then break end
end
table.sort(names)

local rows = {}
for i, g in ipairs(names) do
  local zset, list = lane_size(g)
  local throttled = redis.call('ZSCORE', K_THROTTLED, g)
  rows[i] = {
    g,
    redis.call('HGET', K_GACTIVE, g) or '0',
    redis.call('HGET', K_GLIMIT, g) or '',
    redis.call('HGET', K_GRATE, g) or '',
    redis.call('SISMEMBER', K_GPAUSED, g),
    redis.call('HGET', K_HOLDS, g) or '',
    throttled and string.format('%d', tonumber(throttled)) or '',
    zset,
    list,
  }
end
return { cursor, rows }
