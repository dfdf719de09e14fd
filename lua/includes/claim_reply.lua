-- @include claim_jobs
-- @include next_times
-- @include replay_claim
-- @include queue_meta
-- @include expire_due
-- @include ring_doorbell
-- The reply shared by claim, beat and complete-and-claim:
-- { {now, paused 0|1, next due time, next lease deadline, promoted, requeued, buried}, job, ... }
-- where each job is one string (includes/claimed_job.lua). When fewer than n jobs were claimed (n = 0 included), the
-- caller is about to park (or re-arm its timers): the reply carries the next times (-1 for none)
-- and the schedule bell is emptied, its news being in the reply. A claim that asked for n > 0 and
-- got fewer also empties the doorbell: nothing is claimable at this instant, so every token is
-- stale. Whatever is pushed after this atomic step is news, so no wake-up is ever lost.
-- A claim that got all n carries the next times too when the schedule bell holds a token (a job
-- became the earliest scheduled while no consumer was parked to hear it: a busy consumer arms its
-- timer from the reply), taking the token, or always with `times` (a beat); -1 otherwise.
-- With `request_key` (not ""), the claim is recorded under emq:{q}:req:<key> for its lease, so the
-- same request sent again (its reply lost) answers the same jobs instead of handing out others
-- and leaving these to lapse (includes/replay_claim.lua).
-- In a queue where a job ever had an expiry (meta `xp`), the jobs whose expiry has come go to dead
-- first (includes/expire_due.lua), so a claim never hands one out; when more may be due than one
-- call takes, this call claims nothing and rings the doorbell for the next.
-- the most expired jobs one claim buries before it claims
local EXPIRE_LIMIT = 1000
local function claim_reply(n, lease_ms, now, promoted, requeued, buried, times, request_key)
  local record = nil
  if request_key ~= nil and request_key ~= '' and n > 0 then
    record = PREFIX .. 'req:' .. request_key
    local seen = redis.call('GET', record)
    if seen then return replay_claim(seen, now, lease_ms) end
  end
  local backlog = false
  if (n > 0 or times) and queue_meta().xp then backlog = expire_due(now, EXPIRE_LIMIT) end
  local jobs, paused, held = claim_jobs(backlog and 0 or n, lease_ms, now)
  if record and #jobs > 0 then
    redis.call('SET', record, cjson.encode(held), 'PX', string.format('%d', lease_ms))
  end
  local due_at, next_lease = -1, -1
  if #jobs < n or n == 0 then
    due_at, next_lease = next_times()
    if n > 0 then
      redis.call('DEL', K_WAKE, K_SCHED)
    else
      redis.call('DEL', K_SCHED)
    end
  elseif redis.call('DEL', K_SCHED) == 1 or times then
    due_at, next_lease = next_times()
  end
  -- more may be claimable than this claim handed out: expired jobs swept, or jobs parked on a full key
  if backlog or claim_parked > 0 then ring_doorbell() end
  local reply = { { now, paused and 1 or 0, due_at, next_lease, promoted, requeued, buried } }
  for _, job in ipairs(jobs) do reply[#reply + 1] = job end
  return reply
end
