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
  ARGV[2..] outbox entries `u|<child queue>|<child id>|<q>|<parent id>|<policy f|i|r|w>|<token>|<kind c|d|p|x>|<body>`
  Derives  emq:{q}:job:<parent id>, emq:{q}:kids:<parent id>, emq:{q}:waiting, lanes on release,
           emq:{q}:minutes (a parent failed: includes/bury.lua)
  Applies  completed (c): the record takes its result; dead (d): with `fail-parent` the record
           fails the parent (a waiting parent goes to dead with the child's error), with
           `ignore` it counts as finished with its error, with `remove` (and a child removed,
           x) the parent stops waiting for it, with `wait` it is recorded failed and unfinished
           (k): the parent waits on until the child is reprocessed and finishes; reprocessed (p): the record is unfinished again,
           and a parent this child failed waits again (unless another child failed it too).
           A parent whose finished children reach the children it waits for is released. A
           parent not written yet (a tree is written children first) keeps the news in its
           children hash, which expires after a day unless the parent's enqueue comes
           (includes/add_parent.lua); a parent that is another job now (no `fw`), or that does
           not wait for this child, ignores it
  Reply    {entries applied, parents released, {outbox entries written}}: a parent failed by its
           child tells its own parent (fail_parent), and a parent deleted by its burial has its
           links settled (trim_dead), each through this queue's outbox, for the caller to relay on
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
-- @include chunked

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
  if parts[1] ~= 'u' or parts[4] ~= QUEUE_NAME or not tonumber(parts[7]) or not CHILD_RANK[parts[8]] or not string.match(parts[6], '^[firw]$') then
    error(redis.error_reply('EMQARG a flow entry not for queue ' .. QUEUE_NAME .. ': ' .. string.sub(e, 1, 200)))
  end
  check_kind(parts[5])
  entries[#entries + 1] = parts
end

local now = now_ms()
-- the entries by parent, in the order each parent first appears: a parent's row and records are
-- read once and written once however many of its children the call brings (a completing batch
-- often brings several)
local parents, order = {}, {}
for _, p in ipairs(entries) do
  local list = parents[p[5]]
  if not list then
    list = {}
    parents[p[5]] = list
    order[#order + 1] = p[5]
  end
  list[#list + 1] = p
end

local released, claimable = 0, false
for _, pid in ipairs(order) do
  local list = parents[pid]
  local key, kids = job_key(pid), kids_key(pid)
  local row = redis.call('HMGET', key, 's', 'fw', 'fd', 'fx', 'g', 'o')
  local fields = {}
  for i, p in ipairs(list) do fields[i] = p[2] .. '|' .. p[3] end
  local olds = chunked('HMGET', kids, fields)
  -- each child's record as this call leaves it (false: none), and the records to write
  local current, changed = {}, {}
  for i, f in ipairs(fields) do
    if current[f] == nil then current[f] = olds[i] end
  end
  local function flush()
    local sets, dels = {}, {}
    for f, v in pairs(changed) do
      if v then
        sets[#sets + 1] = f
        sets[#sets + 1] = v
      else
        dels[#dels + 1] = f
      end
    end
    chunked('HSET', kids, sets)
    chunked('HDEL', kids, dels)
    changed = {}
  end
  local state = row[1]
  local total, done = tonumber(row[2]), tonumber(row[3]) or 0
  local function write_counts()
    if total ~= tonumber(row[2]) or done ~= (tonumber(row[3]) or 0) then
      redis.call('HSET', key, 'fw', string.format('%d', total), 'fd', string.format('%d', done))
      row[2], row[3] = string.format('%d', total), string.format('%d', done)
    end
  end
  -- the parent deleted by its own burial (a dead retention that keeps none): nothing more to record
  local gone = false
  for i, p in ipairs(list) do
    local field, policy, token, kind, body = fields[i], p[6], tonumber(p[7]), p[8], p[9]
    -- what the parent records: a death is read by the child's policy
    if kind == 'd' then
      if policy == 'f' then kind = 'f' elseif policy == 'r' then kind = 'x' elseif policy == 'w' then kind = 'k' end
    end
    if kind == 'x' or kind == 'p' then body = '' end
    local old = current[field]
    local value = p[7] .. '|' .. kind .. '|' .. body
    if not state then
      -- no parent row: its news waits in its children hash (expiring unless its enqueue comes)
      if child_news(token, kind, old) then
        current[field], changed[field] = value, value
      end
    elseif total and old and child_news(token, kind, old) then
      local _, old_kind = child_record(old)
      local was = child_done(old_kind)
      if kind == 'x' then
        current[field], changed[field] = false, false
        total = total - 1
        if was then done = done - 1 end
      else
        current[field], changed[field] = value, value
        local is = child_done(kind)
        if is and not was then done = done + 1 elseif was and not is then done = done - 1 end
      end
      if kind == 'f' and state == 'waiting' then
        -- recorded first: the burial may delete the row and its children hash (trim_dead)
        flush()
        write_counts()
        fail_parent(pid, field, body, now)
        state = 'dead'
        row[4] = field
        if redis.call('EXISTS', key) == 0 then
          gone = true
          break
        end
      elseif kind == 'p' and state == 'dead' and row[4] == field then
        -- the child that failed it runs again: the parent waits again, unless another failed it too
        flush()
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
          row[4] = other
        else
          redis.call('ZREM', K_DEAD, pid)
          redis.call('HSET', key, 's', 'waiting')
          redis.call('HDEL', key, 'fx', 'f')
          redis.call('ZADD', K_WAITING, now, pid)
          collect_event('waiting', pid, 'g', row[5], 'n', total)
          state = 'waiting'
          row[4] = false
        end
      end
    end
  end
  if gone then
    changed = {}
  else
    flush()
  end
  if not state then
    redis.call('PEXPIRE', kids, ORPHAN_MS)
  elseif total and not gone then
    write_counts()
    if state == 'waiting' and done >= total then
      if release_parent(pid, row[5], row[6], total) then claimable = true end
      released = released + 1
    end
  end
end
if claimable then ring_doorbell() end
flush_events()
return { #entries, released, outbox_written }
