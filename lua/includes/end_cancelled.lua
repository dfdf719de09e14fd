-- @include job_key
-- @include release_settled
-- @include report_up
-- @include collect_event
-- Job `id`, already out of every other place (its lane, scheduled, waiting, awaiting, active),
-- ends cancelled (docs/design/job-controls.md): indexed in emq:{q}:cancelled (score: when), its
-- row `cancelled` with the reason in `cx` and its finish time in `f`, and `t` = `mark` when given
-- (a run cancelled under its lease leaves `<token>/x`, so a settle of that run, sent now or again
-- later, answers cancelled: includes/each_held.lua). Its until-finished dedupe key is released
-- and leaves the row (a reprocess does not take it again), a flow child (`fp`, its row's; nil
-- when the parent asked for it) tells its parent as a death of its own, which the parent's
-- policy for a failed child reads, and a `cancelled` event (j, g, x the reason) is collected.
-- `token`: the row's `t` (nil for none), for the parent's news. A run ended cancelled (a `mark`)
-- leaves meta `cx`, the count of running jobs whose cancel was asked (deleted at 0: the settles
-- then read no row's `cx` any more).
local function end_cancelled(id, group, reason, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', 'cancelled: ' .. reason, now) end
  redis.call('ZADD', PREFIX .. 'cancelled', now, id)
  if mark then
    redis.call('HSET', job_key(id), 's', 'cancelled', 'cx', reason, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'cancelled', 'cx', reason, 'f', now)
  end
  collect_event('cancelled', id, 'g', group, 'x', reason)
  if mark and redis.call('HINCRBY', K_META, 'cx', -1) <= 0 then redis.call('HDEL', K_META, 'cx') end
end
