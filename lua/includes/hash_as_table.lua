-- Turn hash `key` into Redis's hashtable encoding for good: a field written with a value longer
-- than hash-max-listpack-value (64 by default) converts it, and deleting that field does not
-- convert it back (Redis never packs a hash again while it exists), so nothing stays behind for
-- any reader to skip. Redis keeps a hash of up to 128 fields as a listpack, one packed list that
-- every HGET, HMGET field and HSET walks: the groups' limits and active counts of a queue of 100
-- groups, read and written a field per group at every claim and settle, cost a grouped drain 11%
-- of its instructions that way (bench:instructions drain-groups). On a server that packs nothing
-- the two commands change nothing. The field `~` is no group name (src/keyspace.ts NAME).
-- Callers convert a hash once it holds HASH_AS_TABLE_FIELDS fields or more: below that a walk of
-- the packed list costs about what a hashtable's lookup does, and a queue of a few groups keeps
-- its small hashes small.
local HASH_AS_TABLE_FIELDS = 16
local HASH_AS_TABLE_VALUE = '~ a value over 64 bytes: writing it makes this hash a hashtable for good ~'
local function hash_as_table(key)
  redis.call('HSET', key, '~', HASH_AS_TABLE_VALUE)
  redis.call('HDEL', key, '~')
end
