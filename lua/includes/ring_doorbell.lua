-- @include queue_meta
-- @include push_token
-- @include publish_bell
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
