-- @include job_key
-- A lane's one order over its two parts, from their heads as read: `z`, a zset's ZRANGE WITHSCORES
-- (id, score, ...), and `f`, its arrivals list's LRANGE, whose members' orders are their rows' `o`;
-- the lower order goes first. Takes up to `count` ids from both in that order, and returns them,
-- their orders (nil where it is the row's `o`: a list member's), and how many of each part it
-- took. pop_lane pops what it took; lane_range pages through it. A row read only for a mix of
-- both parts.
local function merge_lane(z, f, count)
  local ids, orders = {}, {}
  local zi, fi, f_order = 1, 1, nil
  while #ids < count and (zi <= #z or fi <= #f) do
    if fi <= #f and not f_order then f_order = tonumber(redis.call('HGET', job_key(f[fi]), 'o')) or 0 end
    if zi <= #z and (fi > #f or tonumber(z[zi + 1]) < f_order) then
      ids[#ids + 1] = z[zi]
      orders[#ids] = z[zi + 1]
      zi = zi + 2
    else
      ids[#ids + 1] = f[fi]
      fi = fi + 1
      f_order = nil
    end
  end
  return ids, orders, (zi - 1) / 2, fi - 1
end
