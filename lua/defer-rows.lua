--[[
  defer-rows.lua: the producer holds rows of a seller beyond its first window
  back until `deferMs` from now (src/upload/deferral.ts). The seller counts as
  throttled until then (lib/acquire-permit.lua), for the log's events. A later
  upload never shortens an earlier one's deferral.

  KEYS[1] defer  string  until when (Redis ms)
  ARGV[1] deferMs: how long from now the last deferred row waits
  ARGV[2] W + G (ms): the key outlives the deferral by one span

  Returns until when the seller's rows are deferred (Redis ms).
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = now + tonumber(ARGV[1])
local before = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if before >= untilMs then return before end
redis.call('SET', KEYS[1], untilMs, 'PX', untilMs - now + tonumber(ARGV[2]))
return untilMs
