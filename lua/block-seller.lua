--[[
  block-seller.lua: the API answered 429 with Retry-After: make every row of the
  seller wait that long, not only the one that met the 429.

  KEYS[1] blocked  string  until when (ms, Redis clock) the seller must not send
  KEYS[2] sent     zset    (see sliding-window.lua)

  ARGV[1] wait (ms) from Retry-After
  ARGV[2] send id of the refused request ("" if none)
  ARGV[3] span W + G (ms)

  `blocked` only moves later, never earlier; it expires when the wait is over.
  The refused send keeps a place in `sent`, timed now.

  Returns the ms until the seller may send again.
]]
local blockedKey, sentKey = KEYS[1], KEYS[2]
local waitMs, sendId, span = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local untilMs = math.max(now + waitMs, tonumber(redis.call('GET', blockedKey) or '0'))
redis.call('SET', blockedKey, untilMs, 'PX', math.max(untilMs - now, 1))
if sendId ~= '' then
  redis.call('ZADD', sentKey, 'XX', now, sendId)
  local ttl = redis.call('PTTL', sentKey)
  if ttl >= 0 and ttl < span + 1000 then redis.call('PEXPIRE', sentKey, span + 1000) end
end
return untilMs - now
