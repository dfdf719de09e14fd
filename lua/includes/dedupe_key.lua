-- The deduplication key `k` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
