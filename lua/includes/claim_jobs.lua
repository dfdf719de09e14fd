-- @include job_key
-- @include queue_meta
-- @include lane_key
-- @include fifo_key
-- @include count_existing
-- @include pop_lane
-- @include chunked
-- @include collect_event
-- @include parse_rate
-- @include rate_used
-- @include rate_due
-- @include log_starts
-- @include throttle
-- @include kids_key
-- @include active_skiplist
-- @include claimed_job
-- @include hash_as_table
-- @include step_key
-- @include step_update
-- @include key_slots
-- @include admit_credited
-- @include lane_serviceable
-- Claim up to n jobs under a lease of lease_ms from the server time `now`, as n turns of the
-- ring: each turn takes the head entry's next job and sends the entry to the back while it is
-- still serviceable, so one busy group cannot starve the others and ungrouped work (the entry
-- UNGROUPED) takes its own turn. A limited group never goes past its limit. The turns are
-- simulated in memory over at most n entries read at once, then the ring is rewritten in two
-- commands (none when its order is unchanged), so a batch costs a few commands per entry instead
-- of per turn.
-- Rate limits (docs/design.md, "Rate limits and holds"): the queue's caps the jobs of the whole
-- claim, a group's its entry's share, at the limit less the starts in the window before now; an
-- entry (or the queue) this claim takes to its limit is throttled until it may start one more, so
-- it is off the ring (and the queue's claims hand out nothing) until a beat readmits it.
-- Each claim increments the row's attempts and takes a lease token from the queue-wide counter
-- meta.fence, written to the row's `t`: unique across every life of an id (a removed id enqueued
-- again starts its attempts from 0, but never its tokens), so a stale holder is always fenced.
-- The bare token replaces the mark a settle left there (includes/settled_token.lua): from this
-- claim on, a settle of an earlier lease sent again is fenced off too.
-- The claim also writes the job's order into the row's `o` (a job waiting in a zset has it only as
-- its score): a job out of its lane needs it to go back in its place (retry, reap, release,
-- reprocess). The lane's zset and arrivals list are popped as one order (includes/pop_lane.lua).
-- Returns the jobs as a claim's reply carries them (includes/claimed_job.lua) in turn order (what
-- n single claims would hand out, one by one), whether the queue is paused, and the ids and
-- tokens handed out (flat: id, token as text, ...), for a request's record (claim_reply).
-- Collects an `active` event (j, g, a) per job in turn order: the caller flushes.
-- Concurrency keys (meta `ks`: includes/key_slots.lua): a popped job whose row names a key at its
-- limit (or its rate limit: the key is then throttled until one more start fits) does not start: it parks on that key (a `parked` event, j g k), out of its lane, so the
-- lane's next job and the other lanes go on (no head-of-line block); its group's slot is not
-- taken, and its group goes back on the ring if it still has work. `claim_parked` counts them: a
-- claim that parked any rings the doorbell (claim_reply), since it handed out fewer than asked
-- while work may be left.
local claim_parked = 0
local function claim_jobs(n, lease_ms, now)
  local jobs, held = {}, {}
  -- paused, the queue's rate limit ("limit:periodMs") and how many groups have one: the call's one read of meta
  local meta = queue_meta()
  if meta.paused then return jobs, true, held end
  if n <= 0 then return jobs, false, held end
  local q_limit, q_period, q_used
  q_limit, q_period = parse_rate(meta.rate)
  if q_limit then
    q_used = rate_used(QUEUE_ENTRY, q_period, now)
    if q_used >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      return jobs, false, held
    end
    n = math.min(n, q_limit - q_used)
  end
  -- one entry more than needed tells whether the fetched entries are the whole ring: a whole ring
  -- whose order the turns leave as it was needs no rewrite (a lone entry claimed one at a time)
  local entries = redis.call('LRANGE', K_RING, 0, n)
  local whole = #entries <= n
  if not whole then entries[#entries] = nil end
  local k = #entries
  if k == 0 then return jobs, false, held end

  local limits, actives, named = {}, {}, {}
  for _, g in ipairs(entries) do
    if g ~= UNGROUPED then named[#named + 1] = g end
  end
  if #named > 0 then
    local l = chunked('HMGET', K_GLIMIT, named)
    local a = chunked('HMGET', K_GACTIVE, named)
    for i, g in ipairs(named) do
      limits[g] = tonumber(l[i])
      actives[g] = tonumber(a[i]) or 0
    end
  end
  -- the groups' rate limits, read only when some group has one: each one's headroom is its limit
  -- less its starts in the window (rates[g] = {limit, period, used})
  local rates = {}
  if #named > 0 and tonumber(meta.grates or '0') > 0 then
    local specs = chunked('HMGET', K_GRATE, named)
    for i, g in ipairs(named) do
      local limit, period = parse_rate(specs[i])
      if limit then
        rates[g] = { limit, period, rate_used(g, period, now) }
      end
    end
  end
  -- whether no entry's zset holds a job (most jobs wait in arrivals lists): one EXISTS for all
  -- (a zset with no member does not exist) spares each entry its zset's size
  local zsets = {}
  for i, g in ipairs(entries) do zsets[i] = lane_key(g) end
  local no_zsets = count_existing(zsets) == 0
  -- what each entry can hand out: its lane's size, within its group's headroom. An entry on the
  -- ring has work and is open (the ring's invariant), so with a headroom of one it hands out one
  -- job, and its arrivals list's length is left for pop_lane to read as it needs it
  local avail, take, queue, zsize, fsize = {}, {}, {}, {}, {}
  for i, g in ipairs(entries) do
    local room = limits[g] and limits[g] - actives[g]
    local rate = rates[g]
    if rate and (not room or rate[1] - rate[3] < room) then room = rate[1] - rate[3] end
    local c
    if no_zsets then zsize[i] = 0 end
    if room and room <= 1 then
      c = math.max(room, 0)
    else
      zsize[i] = zsize[i] or redis.call('ZCARD', lane_key(g))
      fsize[i] = redis.call('LLEN', fifo_key(g))
      c = zsize[i] + fsize[i]
      if room then c = math.min(c, room) end
    end
    avail[i], take[i], queue[i] = c, 0, i
  end

  -- the turns: a whole ring (fewer entries than n) goes round again; a longer one gets one pass
  local head, tail, total = 1, k, 0
  local turns = {} -- the entry of each turn, in turn order: the order the jobs are handed out
  while total < n and head <= tail and (whole or head <= k) do
    local i = queue[head]
    head = head + 1
    if avail[i] > take[i] then
      take[i] = take[i] + 1
      total = total + 1
      turns[total] = i
      if avail[i] > take[i] then
        tail = tail + 1
        queue[tail] = i
      end
    end
  end

  -- the ring afterwards: the fetched prefix replaced by what is still serviceable, in turn order
  local rest, seen, changed = {}, {}, not whole
  for j = head, tail do
    local g = entries[queue[j]]
    if not seen[g] then
      seen[g] = true
      rest[#rest + 1] = g
    end
  end
  if whole and #rest == k then
    for i = 1, k do
      if rest[i] ~= entries[i] then changed = true end
    end
  else
    changed = true
  end
  if changed then
    redis.call('LTRIM', K_RING, k, -1)
    chunked('RPUSH', K_RING, rest)
  end

  -- the fields of each claimed row: a flow's, the steps' and a job's own timeout only in a queue
  -- that ever had them (includes/queue_meta.lua)
  local row_fields = { 'd', 'a', 'm', 'z', 'c', 'x' }
  if meta.fl or meta.st then row_fields[7], row_fields[8] = 'fp', 'fw' end
  if meta.st then row_fields[#row_fields + 1], row_fields[#row_fields + 2] = 'sn', 'sw' end
  if meta.tm then row_fields[#row_fields + 1] = 'to' end
  if meta.ks then row_fields[#row_fields + 1], row_fields[#row_fields + 2] = 'ck', 'o' end
  -- entries some of whose jobs parked on a full key: they may belong on the ring again
  local parked_in = {}
  -- where each optional field is in a row's reply (nil: not asked for, so r[nil] is nil)
  local at = {}
  for i = 7, #row_fields do at[row_fields[i]] = i end
  -- the deadline as text once: a Lua number is formatted for Redis on every call it is passed to
  local deadline = string.format('%d', now + lease_ms)
  -- a big claim keeps the active zset a skiplist (includes/active_skiplist.lua)
  local leases = total >= ACTIVE_SKIPLIST_BATCH and { '+inf', ACTIVE_SKIPLIST_MEMBER } or {}
  local token = 0
  if total > 0 then token = redis.call('HINCRBY', K_META, 'fence', total) - total end
  -- each entry's jobs, popped from its lane in its order (pop_lane: the ids and, from a zset, their orders)
  local popped, popped_orders = {}, {}
  for i, g in ipairs(entries) do
    if take[i] > 0 then popped[i], popped_orders[i] = pop_lane(g, take[i], zsize[i], fsize[i]) end
  end
  -- the groups' new active counts, written in one HSET (their old ones were read above)
  local counts = {}
  -- the tokens handed out, for the queue's starts log when it has a rate limit
  local started = {}
  -- per entry: the jobs it started, and (an entry with a rate limit) their tokens for its starts log
  local started_in, tokens_of = {}, {}
  -- the jobs decided in turn order, as n single claims would hand them out: a consumer runs a
  -- batch in this order, and a concurrency key's room goes to the groups' turns in it, not to
  -- the first entry's jobs
  local next_of = {}
  for _, i in ipairs(turns) do
    local p = (next_of[i] or 0) + 1
    next_of[i] = p
    local id = popped[i] and popped[i][p]
    if id then
      local g = entries[i]
      local orders = popped_orders[i]
      local key = job_key(id)
      -- a flow's fields only in a queue that ever had a flow job (includes/queue_meta.lua)
      local r = redis.call('HMGET', key, unpack(row_fields))
      local full = r[at.ck] and key_slots().take(r[at.ck], token + 1)
      if full then
        -- blocked by a key (at its limit or its rate): parked on it in its order (written into
        -- its row, as a claim does)
        local order = orders and orders[p] or r[at.o]
        if orders and orders[p] then redis.call('HSET', key, 'o', order) end
        key_slots().park(id, full, order, r[at.ck])
        collect_event('parked', id, 'g', g ~= UNGROUPED and g or nil, 'k', full)
        claim_parked = claim_parked + 1
        parked_in[#parked_in + 1] = g
      else
        started_in[i] = (started_in[i] or 0) + 1
        local attempts = (tonumber(r[2]) or 0) + 1
        token = token + 1
        if rates[g] then
          tokens_of[i] = tokens_of[i] or {}
          tokens_of[i][#tokens_of[i] + 1] = token
        end
        if q_limit then started[#started + 1] = token end
        -- the numbers as text (see the deadline above); a job from the arrivals list has its order
        -- in its row already (orders[p] is nil)
        local a_text, t_text = string.format('%d', attempts), string.format('%d', token)
        local order = orders and orders[p]
        if order then
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text, 'o', order)
        else
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text)
        end
        leases[#leases + 1] = deadline
        leases[#leases + 1] = id
        held[#held + 1] = id
        held[#held + 1] = t_text
        -- a flow parent's children (docs/design.md, "Flows") go with it: its hash is in this slot
        local kids = false
        if r[at.fw] then kids = redis.call('HGETALL', kids_key(id)) end
        -- a job's durable steps (docs/design/steps.md) go with it too; an invoke it waited on is
        -- over once it is claimed (its parent was released: its child finished)
        local steps = false
        if r[at.sn] then
          local sw = r[at.sw]
          if sw and string.sub(sw, 1, 1) == 'i' then
            step_update(id, string.sub(sw, 2), { s = 'done', ft = now })
            redis.call('HDEL', key, 'sw')
          end
          steps = redis.call('HGETALL', step_key(id))
        end
        -- this run's attempt: the claims less those given back unstarted (`z`, rarely there); as
        -- text when it is the claim count's (a Lua number is formatted as a float where it is
        -- written into the reply and the `active` event)
        local run = r[4] and attempts - tonumber(r[4]) or a_text
        local group = g ~= UNGROUPED and g or ''
        jobs[#jobs + 1] = claimed_job(id, t_text, group, run, r[3], r[5], r[6], r[at.fp], r[1], kids, steps, r[at.to])
        collect_event('active', id, 'g', g ~= UNGROUPED and g or nil, 'a', run)
      end
    end
  end
  for i, g in ipairs(entries) do
    local n_started = started_in[i] or 0
    if g ~= UNGROUPED and n_started > 0 then
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', actives[g] + n_started)
    end
    -- a group at its rate limit now (or already: nothing else takes it off the ring for it) is
    -- throttled until one more start fits in its window; the rewrite above took it off the ring
    local rate = rates[g]
    if rate then
      log_starts(g, tokens_of[i] or {}, rate[2], now)
      if rate[3] + n_started >= rate[1] then
        throttle(g, rate_due(g, rate[1], rate[2], now))
        redis.call('HINCRBY', K_META, 'rated', 1)
      end
    end
  end
  if q_limit then
    log_starts(QUEUE_ENTRY, started, q_period, now)
    if q_used + #started >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      redis.call('HINCRBY', K_META, 'rated', 1)
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  -- a claim that counts many groups' jobs keeps their counts in a hashtable (includes/hash_as_table.lua):
  -- the hash is deleted each time its last count reaches 0, and made again packed
  if #counts >= 2 * HASH_AS_TABLE_FIELDS then hash_as_table(K_GACTIVE) end
  if meta.ks then
    -- an entry whose parked jobs left it room and work goes back on the ring (the rewrite above
    -- counted them taken)
    for _, g in ipairs(parked_in) do
      if not seen[g] and lane_serviceable(g) then
        redis.call('RPUSH', K_RING, g)
        seen[g] = true
      end
    end
    if key_slots_made then
      key_slots_made.write()
      -- jobs another key's room takes back as this claim parks theirs (key_slots' park), after
      -- the ring's repair: admit puts an emptied lane's entry on the ring itself, and the repair
      -- would put it there a second time
      admit_credited()
    end
  end
  chunked('ZADD', K_ACTIVE, leases)
  return jobs, false, held
end
