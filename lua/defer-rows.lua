--[[
  defer-rows.lua: the producer holds rows of a seller beyond its first window
  back until `deferMs` from now (src/upload/deferral.ts). The log's throttle
  flag lasts until then at least (lib/acquire-permit.lua). A later
  upload never shortens an earlier one's deferral. The deferred jobs are noted,
  so that a rule raised meanwhile can bring them forward.

  KEYS[1] defer     string  until when (Redis ms)
  KEYS[2] deferred  set     "{queue prefix}\t{job id}" of each deferred row
  ARGV[1] deferMs: how long from now the last deferred row waits
  ARGV[2] W + G (ms): the keys outlive the deferral by one span
  ARGV[3..] the deferred rows, as KEYS[2] holds them

  Returns until when the seller's rows are deferred (Redis ms).
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = now + tonumber(ARGV[1])
local before = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
untilMs = math.max(untilMs, before)
local ttl = untilMs - now + tonumber(ARGV[2])
redis.call('SET', KEYS[1], untilMs, 'PX', ttl)
for i = 3, #ARGV, 1000 do
  redis.call('SADD', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if #ARGV >= 3 then redis.call('PEXPIRE', KEYS[2], ttl) end
return untilMs
