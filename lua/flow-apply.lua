--[[
  flow-apply: apply flow children's news to their parents in this queue (docs/design.md, "Flows").
  A child's outcome is appended to its own queue's outbox in the script that settled it; the
  runtime that got the entry (or a later beat of the child's queue) sends it here, to the
  parent's slot, then acknowledges it there (flow-ack). Each parent keeps the newest news per
  child (includes/child_record.lua), so an entry applied twice, late, or after a newer one
  changes nothing: a crash between the child's settle and this call delays the parent, never
  loses or doubles its release.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua): the parents' queue
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] outbox entries `u|<child queue>|<child id>|<q>|<parent id>|<policy f|i|r>|<token>|<kind c|d|p|x>|<body>`
  Derives  emq:{q}:job:<parent id>, emq:{q}:kids:<parent id>, emq:{q}:waiting, lanes on release
  Applies  completed (c): the record takes its result; dead (d): with `fail-parent` the record
           fails the parent (a waiting parent goes to dead with the child's error), with
           `ignore` it counts as finished with its error, with `remove` (and a child removed,
           x) the parent stops waiting for it; reprocessed (p): the record is unfinished again,
           and a parent this child failed waits again (unless another child failed it too).
           A parent whose finished children reach the children it waits for is released. A
           parent not written yet (a tree is written children first) keeps the news in its
           children hash, which expires after a day unless the parent's enqueue comes
           (includes/add_parent.lua); a parent that is another job now (no `fw`), or that does
           not wait for this child, ignores it
  Reply    {entries applied, parents released}
  Events   `released` (j, g) per parent released, `dead` (j, g, x) per parent failed, `waiting`
           (j, g, n) per parent waiting again, in one entry
  Errors   EMQARG (an entry not of this queue, or malformed), EMQKIND; before anything is written
  Rings    the doorbell when a released parent is claimable now
]]
-- @include keyspace
-- @include check_kind
-- @include now_ms
-- @include job_key
-- @include kids_key
-- @include child_record
-- @include release_parent
-- @include fail_parent
-- @include collect_event
-- @include flush_events
-- @include ring_doorbell

-- how long a parent not yet written keeps its children's news: a day
local ORPHAN_MS = 86400000
local entries = {}
for i = 2, #ARGV do
  local e, parts, pos = ARGV[i], {}, 1
  for k = 1, 8 do
    local bar = string.find(e, '|', pos, true)
    if not bar then error(redis.error_reply('EMQARG a malformed flow entry: ' .. string.sub(e, 1, 200))) end
    parts[k] = string.sub(e, pos, bar - 1)
    pos = bar + 1
  end
  parts[9] = string.sub(e, pos)
  if parts[1] ~= 'u' or parts[4] ~= QUEUE_NAME or not tonumber(parts[7]) or not CHILD_RANK[parts[8]] or not string.match(parts[6], '^[fir]$') then
    error(redis.error_reply('EMQARG a flow entry not for queue ' .. QUEUE_NAME .. ': ' .. string.sub(e, 1, 200)))
  end
  check_kind(parts[5])
  entries[#entries + 1] = parts
end

local now = now_ms()
local released, claimable = 0, false
for _, p in ipairs(entries) do
  local field, pid, policy, token, kind, body = p[2] .. '|' .. p[3], p[5], p[6], tonumber(p[7]), p[8], p[9]
  -- what the parent records: a death is read by the child's policy
  if kind == 'd' then
    if policy == 'f' then kind = 'f' elseif policy == 'r' then kind = 'x' end
  end
  if kind == 'x' or kind == 'p' then body = '' end
  local key, kids = job_key(pid), kids_key(pid)
  local row = redis.call('HMGET', key, 's', 'fw', 'fd', 'fx', 'g', 'o')
  local old = redis.call('HGET', kids, field)
  if not row[1] then
    if child_news(token, kind, old) then
      redis.call('HSET', kids, field, p[7] .. '|' .. kind .. '|' .. body)
      redis.call('PEXPIRE', kids, ORPHAN_MS)
    end
  elseif row[2] and old and child_news(token, kind, old) then
    local _, old_kind = child_record(old)
    local was = child_done(old_kind)
    local total, done = tonumber(row[2]), tonumber(row[3]) or 0
    if kind == 'x' then
      redis.call('HDEL', kids, field)
      total = total - 1
      if was then done = done - 1 end
    else
      redis.call('HSET', kids, field, p[7] .. '|' .. kind .. '|' .. body)
      local is = child_done(kind)
      if is and not was then done = done + 1 elseif was and not is then done = done - 1 end
    end
    redis.call('HSET', key, 'fw', string.format('%d', total), 'fd', string.format('%d', done))
    local state = row[1]
    if kind == 'f' and state == 'waiting' then
      fail_parent(pid, field, body, now)
      state = 'dead'
    elseif kind == 'p' and state == 'dead' and row[4] == field then
      -- the child that failed it runs again: the parent waits again, unless another failed it too
      local other = nil
      local flat = redis.call('HGETALL', kids)
      for j = 1, #flat, 2 do
        local _, k = child_record(flat[j + 1])
        if k == 'f' then
          other = flat[j]
          break
        end
      end
      if other then
        redis.call('HSET', key, 'fx', other)
      else
        redis.call('ZREM', K_DEAD, pid)
        redis.call('HSET', key, 's', 'waiting')
        redis.call('HDEL', key, 'fx', 'f')
        redis.call('ZADD', K_WAITING, now, pid)
        collect_event('waiting', pid, 'g', row[5], 'n', total)
        state = 'waiting'
      end
    end
    if state == 'waiting' and done >= total then
      if release_parent(pid, row[5], row[6], total) then claimable = true end
      released = released + 1
    end
  end
end
if claimable then ring_doorbell() end
flush_events()
return { #entries, released }
