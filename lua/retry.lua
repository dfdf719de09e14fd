--[[
  retry: a leased job's attempt failed; fenced on (id, token). Back to its lane now, or to
  scheduled after its backoff (or an explicit delay), or dead once its attempts are used up.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] tuples of 5: id, token, error text, delayMs (-1 = the job's backoff), rand in [0, 1)
           for the backoff's jitter
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:minutes
           (each burial counted in its minute: includes/bury.lua)
  Reply    { {code, ...}, {outbox entries written: a flow child's death, for its parent} }: 1 scheduled for later, 2 claimable again now, 3 dead (attempts used up),
           0 fenced off (nothing changed). A repeat (the same id and token again: a reply lost
           and the request sent again) answers the code the first gave (1, 2 or 3) and writes
           nothing, whatever became of the job since short of a new claim or a remove
  Events   per job retried, in ARGV order, in one entry: `retried` (j, g, a, x the error, d when it
           is due again: now when it is claimable at once), or `dead` (j, g, a, x) when its
           attempts are used up; a fenced-off job or a repeat appends nothing
  Repeats  the retry leaves its outcome after the token in `t` (`<token>/r<code>`,
           includes/settled_token.lua). Only the holder of the token can write that mark (the
           fence) and a token is handed out once in the queue (invariant 4), so the mark means
           this very retry ran. What moves the row on keeps `t` as it is (promote, move-group,
           reprocess, which also leaves `a`: the repeat answers as the first did and must not
           write, the job having moved on) or rewrites it (a claim; remove deletes the row): then
           fenced. The reaper leaves the claim's bare token (it keeps `a` too), so a holder
           whose lease was reaped is fenced off, never taken for a repeat.
  Counts   meta `retried` += the jobs retried (not those buried), one HINCRBY a call (/metrics)
  Dedupe   a job buried releases its until-finished dedupe key, which leaves its row (bury)
  Errors   EMQKIND, EMQARG, raised before anything is written
  Rings    the doorbell when the job is claimable again now or a freed group slot made work
           claimable; the schedule bell when a retry is the earliest scheduled job
]]
-- @include keyspace
-- @include check_kind
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include hold
-- @include each_held
-- @include settle_cancelled
-- @include settled_token
-- @include repeat_code
-- @include tally
-- @include bury
-- @include backoff_delay
-- @include batch_push
-- @include free_and_admit
-- @include ring_doorbell
-- @include ring_sched_bell
-- @include collect_event
-- @include flush_events

for i = 2, #ARGV, 5 do
  check_kind(ARGV[i])
  arg_int(ARGV[i + 3], 'delayMs', -1)
end

local now = now_ms()
local freed, batch, later = { order = {} }, { order = {} }, {}
local outcomes = { 1, 2, 3 }
local retried = 0
local codes = each_held(2, 5, hold, function(id, row, i)
  local attempts, group, max_attempts, base, backoff, order = unpack(row)
  local token, err = ARGV[i + 1], ARGV[i + 2]
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, group)
  local attempt = attempts - base
  if attempts - base >= max_attempts then
    bury(id, err, now, settled_token(token, 'r3'), row[7], row[8], row[9], token)
    collect_event('dead', id, 'g', group, 'a', attempt, 'x', err)
    return 3
  end
  local delay = tonumber(ARGV[i + 3])
  if delay < 0 then delay = backoff_delay(backoff, attempts - base, tonumber(ARGV[i + 4]) or 0) end
  local key = job_key(id)
  if delay > 0 then
    redis.call('ZADD', K_SCHEDULED, now + delay, id)
    later[id] = true
    redis.call('HSET', key, 's', 'scheduled', 'e', err, 't', settled_token(token, 'r1'))
    -- %.0f: a delay may be any size (an explicit one is not capped), where %d would overflow
    collect_event('retried', id, 'g', group, 'a', attempt, 'x', err, 'd', string.format('%.0f', now + delay))
    retried = retried + 1
    return 1
  end
  redis.call('HSET', key, 's', 'pending', 'e', err, 't', settled_token(token, 'r2'))
  batch_push(batch, group, order, id)
  collect_event('retried', id, 'g', group, 'a', attempt, 'x', err, 'd', string.format('%d', now))
  retried = retried + 1
  return 2
end, function(token, _, t)
  return repeat_code(token, t, 'r', outcomes)
end, settle_cancelled)
if free_and_admit(freed, batch) then ring_doorbell() end
if next(later) then ring_sched_bell(later) end
-- the counter of retries for /metrics: once a call, not once a job
if retried > 0 then redis.call('HINCRBY', K_META, 'retried', retried) end
flush_events()
return { codes, outbox_written }
