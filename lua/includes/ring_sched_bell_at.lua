-- @include push_token
-- @include next_due
-- @include publish_bell
-- The schedule bell for a time `at` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto `sched` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
