-- @include batch_push
-- @include admit
-- admit for one job going back in its place (reprocess, a move between groups): into ring entry
-- g's zset at its order `score`. Returns true when it is claimable now.
local function admit_one(g, score, id)
  local batch = { order = {} }
  batch_push(batch, g, score, id)
  return admit(batch)
end
