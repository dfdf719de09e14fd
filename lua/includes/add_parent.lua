-- @include job_key
-- @include rare_fields
-- @include write_row
-- @include kids_key
-- @include child_record
-- @include release_parent
-- @include fail_parent
-- @include collect_event
-- @include chunked
-- Write a new flow parent's row in state `waiting` (docs/design.md, "Flows"), in the waiting set
-- (score: now), with its children hash: `children` is their `<queue>|<id>` joined by ','. A tree
-- is written children first, so a child may have finished (and told this parent, through the
-- outbox, before its row existed): its news is already in the hash (flow-apply keeps it there, the
-- hash expiring unless this enqueue comes), and counts now. The row keeps the order `o`, `fw` the
-- children it waits for and `fd` how many have finished; `parent` (`fp`, nil for none) when it is a
-- child itself. The other arguments as add_job takes them. Collects a `waiting` event (j, g, n
-- the children). Returns its state: `waiting`, `pending` (every child had finished: released at
-- once, and whether it is claimable now as a second value) or `dead` (a child had failed it).
local function add_parent(key, id, payload, group, priority, max_attempts, backoff, seq, now, now_text, traceparent, parent, children)
  local order = string.format('%d', priority * 4294967296 + (seq % 4294967296))
  local rare = rare_fields(max_attempts, backoff, priority, traceparent, parent) or {}
  local fields = {}
  for f in string.gmatch(children, '[^,]+') do fields[#fields + 1] = f end
  local kids = kids_key(id)
  local total, done, failed = #fields, 0, nil
  if redis.call('EXISTS', kids) == 0 then
    local args = {}
    for _, f in ipairs(fields) do
      args[#args + 1] = f
      args[#args + 1] = '0|w|'
    end
    chunked('HSET', kids, args)
  else
    total = 0
    local seen = chunked('HMGET', kids, fields)
    for i, f in ipairs(fields) do
      local token, kind, body = child_record(seen[i])
      if token < 0 then
        redis.call('HSET', kids, f, '0|w|')
        total = total + 1
      elseif kind == 'x' then
        redis.call('HDEL', kids, f)
      else
        total = total + 1
        if child_done(kind) then done = done + 1 end
        if kind == 'f' and not failed then failed = { f, body } end
      end
    end
    redis.call('PERSIST', kids)
  end
  rare[#rare + 1] = 'fw'
  rare[#rare + 1] = string.format('%d', total)
  rare[#rare + 1] = 'fd'
  rare[#rare + 1] = string.format('%d', done)
  write_row(key, 'waiting', payload, now_text, order, group, rare)
  redis.call('ZADD', K_WAITING, now, id)
  local g = group ~= '' and group or false
  collect_event('waiting', id, 'g', g, 'n', total)
  if failed then
    fail_parent(id, failed[1], failed[2], now)
    return 'dead', false
  end
  if done >= total then return 'pending', release_parent(id, g, order, total) end
  return 'waiting', false
end
