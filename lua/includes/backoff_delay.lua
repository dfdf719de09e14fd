-- @include job_defaults
-- The delay before retry number `attempts` under backoff spec "<f|e>,<delayMs>,<capMs>,<jitter>":
-- fixed or exponential (delay * 2^(attempts-1)), capped, then reduced by up to `jitter` of
-- itself using `rand` in [0, 1) supplied by the caller (Lua's PRNG is not random on every host).
-- An absent spec (a row on the defaults) is DEFAULT_BACKOFF. A spec it cannot read (a row edited
-- by hand) backs off like the default spec too, never "no delay": raising an error here would
-- leave the retry half done.
local function backoff_delay(spec, attempts, rand)
  local pattern = '^([fe]),(%d+),(%d+),([%d.eE+-]+)$'
  local kind, base, cap, jitter = string.match(spec or DEFAULT_BACKOFF, pattern)
  if not kind or not tonumber(jitter) then
    kind, base, cap, jitter = string.match(DEFAULT_BACKOFF, pattern)
  end
  local d = tonumber(base)
  if kind == 'e' then d = d * 2 ^ math.min(attempts - 1, 52) end
  d = math.min(d, tonumber(cap))
  return math.floor(d - d * tonumber(jitter) * rand)
end
