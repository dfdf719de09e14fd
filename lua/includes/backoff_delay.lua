-- The delay before retry number `attempts` under backoff spec "<f|e>,<delayMs>,<capMs>,<jitter>":
-- fixed or exponential (delay * 2^(attempts-1)), capped, then reduced by up to `jitter` of
-- itself using `rand` in [0, 1) supplied by the caller (Lua's PRNG is not random on every host).
-- A spec it cannot read (a row edited by hand) backs off like the default spec, never "no delay":
-- raising an error here would leave the retry half done.
local function backoff_delay(spec, attempts, rand)
  local kind, base, cap, jitter = string.match(spec or '', '^([fe]),(%d+),(%d+),([%d.eE+-]+)$')
  if not kind or not tonumber(jitter) then
    kind, base, cap, jitter = 'e', '1000', '3600000', '0.2'
  end
  local d = tonumber(base)
  if kind == 'e' then d = d * 2 ^ math.min(attempts - 1, 52) end
  d = math.min(d, tonumber(cap))
  return math.floor(d - d * tonumber(jitter) * rand)
end
