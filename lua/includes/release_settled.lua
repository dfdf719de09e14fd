-- @include job_key
-- @include release_dedupe
-- A job that held deduplication key `k` (its row's `dk`; nil or false: none) in until-finished
-- mode (no `dt`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; `forget` (a dead job's row stays) also takes `dk` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
