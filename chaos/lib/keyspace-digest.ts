import type { Redis } from 'ioredis';

/**
 * One script over the whole database: every key with its type and its contents in a canonical
 * order (hash fields and set members sorted, so a rehash or an encoding change between two reads
 * is not a difference; DUMP would show one), and whether it has a TTL. A key that expires before
 * ARGV[1] (epoch ms; 0 = the server's time now plus ARGV[2] ms, the cut-off it answers with) is
 * left out, so a key that lapses between two reads with the same cut-off is not taken for a write.
 */
const DIGEST_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cutoff = tonumber(ARGV[1])
if cutoff == 0 then cutoff = now + tonumber(ARGV[2]) end
local keys = redis.call('KEYS', '*')
table.sort(keys)
local parts = {}
local function sorted(list) table.sort(list) return table.concat(list, '\\1') end
-- the instant a key expires: PEXPIRETIME is exact (Redis 7); now + PTTL may be 1 ms off, and a
-- key that expires at the cut-off could then be in one digest and not in the other
local exact = pcall(redis.call, 'PEXPIRETIME', 'fuzz:no-such-key')
local function expires(key)
  if exact then return redis.call('PEXPIRETIME', key) end
  local ttl = redis.call('PTTL', key)
  return ttl < 0 and ttl or now + ttl
end
for _, key in ipairs(keys) do
  local at = expires(key)
  local ttl = at < 0 and -1 or 1
  if at < 0 or at >= cutoff then
    local kind = redis.call('TYPE', key).ok
    local body
    if kind == 'string' then body = redis.call('GET', key)
    elseif kind == 'hash' then
      local flat, pairs_ = redis.call('HGETALL', key), {}
      for i = 1, #flat, 2 do pairs_[#pairs_ + 1] = flat[i] .. '\\2' .. flat[i + 1] end
      body = sorted(pairs_)
    elseif kind == 'set' then body = sorted(redis.call('SMEMBERS', key))
    elseif kind == 'zset' then body = table.concat(redis.call('ZRANGE', key, 0, -1, 'WITHSCORES'), '\\1')
    elseif kind == 'list' then body = table.concat(redis.call('LRANGE', key, 0, -1), '\\1')
    else body = kind end
    parts[#parts + 1] = key .. '\\0' .. kind .. '\\0' .. (ttl < 0 and '-' or '+') .. '\\0' .. body
  end
end
local text = table.concat(parts, '\\0\\0')
return { #keys, redis.sha1hex(text), tostring(cutoff), #text }
`;

/** What a database holds, in one comparable value. */
export interface KeyspaceDigest {
  /** How many keys (those left out included). */
  readonly keys: number;
  /** A sha1 of every key's name, type, contents and whether it has a TTL. */
  readonly sha1: string;
  /** The bytes hashed: what the next digest will cost. */
  readonly bytes: number;
  /** Keys that expire before this instant (server time, epoch ms) are left out: pass it to the digest to compare with. */
  readonly cutoff: number;
}

/**
 * A digest of every key of the database `raw` is connected to, values included (not just the key
 * list). Keys that expire within `soonMs` are left out, and a second digest given the first's
 * cut-off leaves out the same ones, so a TTL lapsing between the two is not a write; two equal
 * digests mean nothing was written in between (a TTL changed, or a key written to expire before
 * the cut-off, is not seen). Atomic (one script), and cheap for the few thousand keys a fuzzer
 * keeps.
 *
 * @example
 * const before = await keyspaceDigest(raw);
 * await expect(queue.add(undefined)).rejects.toThrow();
 * expect((await keyspaceDigest(raw, before)).sha1).toBe(before.sha1);
 */
export async function keyspaceDigest(raw: Redis, since?: KeyspaceDigest, soonMs = 10_000): Promise<KeyspaceDigest> {
  const [keys, sha1, cutoff, bytes] = (await raw.eval(DIGEST_LUA, 0, since?.cutoff ?? 0, soonMs)) as [number, string, string, number];
  return { keys, sha1, cutoff: Number(cutoff), bytes };
}

/** Past these a fuzzer's database is emptied before its next case, so each digest stays cheap (a few ms). */
const MAX_KEYS = 1_000;
const MAX_BYTES = 2 * 1024 * 1024;

/**
 * The digest to compare a case's outcome with, taken after emptying the database (FLUSHDB: only
 * for a database the caller owns) when it has grown past 1,000 keys or 2 MiB of contents.
 *
 * @example
 * const before = await digestBeforeCase(raw);
 */
export async function digestBeforeCase(raw: Redis): Promise<KeyspaceDigest> {
  const digest = await keyspaceDigest(raw);
  if (digest.keys <= MAX_KEYS && digest.bytes <= MAX_BYTES) return digest;
  await raw.flushdb();
  return keyspaceDigest(raw);
}
