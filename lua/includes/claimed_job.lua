-- @include job_defaults
-- A claimed job as a claim's reply carries it: one string, its fields joined by single spaces and
-- the payload last, "<id> <token> <group> <attempt of this run> <max attempts> <created> <traceparent>
-- <parent> <timeout> <payload>" ('' for a field it lacks: no group, no traceparent, not a flow child), or, for
-- a flow parent or a job with durable steps, { that string, its children hash flat (`kids`, false
-- for none: 0 in the reply), its steps hash flat (`steps`, absent for none: docs/design/steps.md) }. No field but the
-- payload can hold a space: ids, group and queue names and traceparents are checked for their
-- characters before they are written (src/encode.ts, src/keyspace.ts), and the payload, which
-- may, comes last (src/ops/claim.ts reads it). One string where a table of ten was: Redis writes,
-- and the client reads, one reply element a job instead of eleven.
-- `token` and `attempt` are text or numbers (a Lua number below 2^53 concatenates in full), the
-- rest text as the row holds it (`max_attempts` nil for the default, `created` its `c`).
local function claimed_job(id, token, group, attempt, max_attempts, created, traceparent, parent, payload, kids, steps, timeout)
  local wire = id .. ' ' .. token .. ' ' .. group .. ' ' .. attempt .. ' ' .. (max_attempts or DEFAULT_MAX_ATTEMPTS)
    .. ' ' .. (created or '') .. ' ' .. (traceparent or '') .. ' ' .. (parent or '') .. ' ' .. (timeout or '') .. ' ' .. payload
  if steps then return { wire, kids or 0, steps } end
  if kids then return { wire, kids } end
  return wire
end
