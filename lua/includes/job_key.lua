-- The row of job `id` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
