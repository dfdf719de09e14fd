-- @include claim_jobs
-- @include next_times
-- The reply shared by claim, beat and complete-and-claim:
-- { {now, paused 0|1, next due time, next lease deadline, promoted, requeued, buried}, job, ... }
-- where each job is claim_jobs' tuple. The next times (-1 for none) are read only when fewer
-- than n jobs were claimed: that is when a consumer is about to park.
local function claim_reply(n, lease_ms, now, promoted, requeued, buried)
  local jobs, paused = claim_jobs(n, lease_ms, now)
  local next_due, next_lease = -1, -1
  if #jobs < n or paused then next_due, next_lease = next_times() end
  local reply = { { now, paused and 1 or 0, next_due, next_lease, promoted, requeued, buried } }
  for _, job in ipairs(jobs) do reply[#reply + 1] = job end
  return reply
end
