-- @include job_key
-- @include trim_dead
-- @include release_settled
-- @include report_up
-- @include count_minute
-- Move job `id`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove) and in
-- its minute's bucket (count_minute: every way to dead comes through here, the reaper's too), then
-- apply the queue's retention of dead jobs (trim_dead), which may delete this very row when the
-- retention keeps none.
-- `mark`: the `t` the settle that buries it leaves (settled_token), nil for the reaper, which
-- leaves the claim's bare token so the holder it took the lease from stays fenced off.
-- `dk`, `dt`: the row's dedupe key and its ttl (false or nil: none): an until-finished key is
-- released and leaves the row (release_settled), so a reprocess does not take it again.
-- `fp`, `token`: a flow child's parent (its row's `fp`; nil for none) and the lease token of the
-- run that died (nil: none), for the news its parent gets through the outbox (report_up).
local function bury(id, err, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', err, now) end
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  count_minute('d', 1, now)
  if mark then
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
  end
  trim_dead(now)
end
