-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without `m` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without `b` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
