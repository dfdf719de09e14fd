-- @include fifo_key
-- @include lane_nonempty
-- @include count_existing
-- The entries of `entries` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
