-- A W3C traceparent as the core formats it ("00-<32 hex>-<16 hex>-<2 hex>", lowercase, 55
-- characters), or nil for "" (none). Anything else is refused with EMQARG before the script
-- writes anything: the row's `x` is always a traceparent a reader can parse.
-- The pattern written out, not built with string.rep: Redis runs a script's top level on every
-- call, and building it there cost a single add 5% of its instructions (20k of 384k, callgrind).
local TRACEPARENT = '^00%-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]%-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]%-[0-9a-f][0-9a-f]$'
local function check_traceparent(v)
  if v == '' then return nil end
  if type(v) ~= 'string' or not string.find(v, TRACEPARENT) then
    error(redis.error_reply('EMQARG a traceparent must be 00-<32 hex>-<16 hex>-<2 hex>, got ' .. tostring(v)))
  end
  return v
end
