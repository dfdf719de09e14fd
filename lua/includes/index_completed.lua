-- @include chunked
-- Index the rows `ids` just completed at `now` (`now_text` its text) in K_COMPLETED, score = when,
-- so getJobs, clean and obliterate find them; then drop the entries older than `keep_ms` (when it
-- is above 0), at most 1000 a call: their rows have expired by their own TTL, and a backlog (the
-- retention just shortened) goes over several calls instead of blocking one. keep_ms 0 keeps no
-- row and indexes nothing. One ZADD for the batch, one ZCOUNT, and a ZREMRANGEBYRANK when stale.
local function index_completed(ids, now, now_text, keep_ms)
  if keep_ms == 0 or #ids == 0 then return end
  local scored = {}
  for _, id in ipairs(ids) do
    scored[#scored + 1] = now_text
    scored[#scored + 1] = id
  end
  chunked('ZADD', K_COMPLETED, scored)
  if keep_ms < 0 then return end
  -- strictly older: a row completed exactly keep_ms ago is still readable this millisecond (Redis
  -- expires a key once its time has passed), so its entry stays until the next
  local stale = redis.call('ZCOUNT', K_COMPLETED, '-inf', string.format('(%d', now - keep_ms))
  if stale > 0 then redis.call('ZREMRANGEBYRANK', K_COMPLETED, 0, math.min(stale, 1000) - 1) end
end
