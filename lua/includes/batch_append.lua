-- @include batch_entry
-- Collect job `id` for admission (see admit) at the tail of ring entry g's arrivals list: only a
-- job just enqueued at the default priority, whose order (its seq, kept in the row's `o`) is
-- above every order in any list, so each list stays in order with RPUSH alone.
local function batch_append(batch, g, id)
  local e = batch_entry(batch, g)
  e.f[#e.f + 1] = id
end
