-- @include push_token
-- @include publish_bell
-- The schedule bell: when one of `ids` (a set: id -> true) just became the earliest scheduled job,
-- push a token onto `sched` (at most 64) so a parked consumer re-reads the next due time and sets
-- its timer. Nothing is claimable yet, so the doorbell stays quiet.
local function ring_sched_bell(ids)
  local head = redis.call('ZRANGE', K_SCHEDULED, 0, 0)[1]
  if head and ids[head] then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
