--[[
  pool-presence.lua: a worker pool's presence (src/worker/pool-presence.ts),
  written or read on Redis's clock, so that a reader on a host whose clock is
  off still judges it right. One call, one key.

  KEYS[1] pools  hash  "{ns}:pools": pool id ("host:pid") -> JSON { id, up, expected, at }

  ARGV[1] "write" or "read"
  write:
    ARGV[2] the pool's id
    ARGV[3] its presence as JSON without `at` (an object: `,"at":<ms>}` replaces its closing brace)
    ARGV[4] the hash's TTL (ms)
    Returns the PEXPIRE reply (1).
  read:
    Returns { now (Redis ms), { id1, json1, id2, json2, ... } }: every field, and
    the time to judge their `at` by.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[1] == 'read' then
  return { now, redis.call('HGETALL', KEYS[1]) }
end
redis.call('HSET', KEYS[1], ARGV[2], string.sub(ARGV[3], 1, -2) .. ',"at":' .. string.format('%d', now) .. '}')
return redis.call('PEXPIRE', KEYS[1], ARGV[4])
