-- @include lane_key
-- @include fifo_key
-- @include job_key
-- @include merge_lane
-- The ids of ring entry g's claimable jobs at positions [skip, skip + count) of the order a claim
-- takes them: its zset (zn members) and its arrivals list (fn) as one order, the zset's scores
-- against the list members' rows' `o` (see pop_lane). Where the two parts split at `skip` is
-- found by a binary search (a ZRANGE, a LINDEX and an HGET a step), so a page far down a long lane
-- reads its own entries and a few probes, never the entries before it. A lane with one part empty
-- (the usual case: no zset) is one LRANGE or ZRANGE.
local function lane_range(g, skip, count, zn, fn)
  local zkey, fkey = lane_key(g), fifo_key(g)
  if zn == 0 then return redis.call('LRANGE', fkey, skip, skip + count - 1) end
  if fn == 0 then return redis.call('ZRANGE', zkey, skip, skip + count - 1) end
  local function zorder(i)
    return tonumber(redis.call('ZRANGE', zkey, i, i, 'WITHSCORES')[2])
  end
  local function forder(j)
    return tonumber(redis.call('HGET', job_key(redis.call('LINDEX', fkey, j)), 'o')) or 0
  end
  -- i: how many of the first `skip` jobs come from the zset (j = skip - i from the list)
  local lo, hi = math.max(0, skip - fn), math.min(skip, zn)
  local i = lo
  while lo <= hi do
    i = math.floor((lo + hi) / 2)
    local j = skip - i
    if i < zn and j > 0 and forder(j - 1) > zorder(i) then
      lo = i + 1
    elseif i > 0 and j < fn and zorder(i - 1) > forder(j) then
      hi = i - 1
    else
      break
    end
  end
  local j = skip - i
  local z = redis.call('ZRANGE', zkey, i, i + count - 1, 'WITHSCORES')
  local f = redis.call('LRANGE', fkey, j, j + count - 1)
  return (merge_lane(z, f, count))
end
