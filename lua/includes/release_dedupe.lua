-- @include dedupe_key
-- Release deduplication key `k` (a row's `dk`; nil or false: the job has none) held by job `id`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
