-- @include lane_key
-- @include fifo_key
-- @include merge_lane
-- Take the `count` first jobs of ring entry g, whose zset holds `zn` and arrivals list `fn`
-- (count <= zn + fn; either is nil when the caller has not read it: then the zset's size is read
-- if need be, and the list's only if the zset holds any, and fewer than count may come back).
-- The lane's order is one order over both: each list member's order is its row's `o`, each zset
-- member's its score; the lower goes first. Returns the ids in that order and their orders; an
-- order is nil where it is the row's `o` (a list member), so only a mix of both parts reads rows
-- here; the orders are nil altogether when every job came from the arrivals list.
local function pop_lane(g, count, zn, fn)
  if not zn then zn = redis.call('ZCARD', lane_key(g)) end
  -- the count as text: a Lua number is formatted for Redis on every call it is passed to; from
  -- the arrivals list alone every order is its row's, so there are no orders to hand back
  if zn == 0 then return redis.call('LPOP', fifo_key(g), string.format('%d', count)) or {}, nil end
  local ids, orders = {}, {}
  if not fn then
    fn = redis.call('LLEN', fifo_key(g))
    count = math.min(count, zn + fn)
  end
  if fn == 0 then
    local popped = redis.call('ZPOPMIN', lane_key(g), string.format('%d', count))
    for p = 1, #popped, 2 do
      ids[#ids + 1] = popped[p]
      orders[#ids] = popped[p + 1]
    end
    return ids, orders
  end
  local z = redis.call('ZRANGE', lane_key(g), 0, count - 1, 'WITHSCORES')
  local f = redis.call('LRANGE', fifo_key(g), 0, count - 1)
  local zk, fk
  ids, orders, zk, fk = merge_lane(z, f, count)
  if zk > 0 then redis.call('ZPOPMIN', lane_key(g), zk) end
  if fk > 0 then redis.call('LPOP', fifo_key(g), fk) end
  return ids, orders
end
