--[[
  peek-permit.lua: when could a new row of this seller be sent? Read-only.

  KEYS[1] plan, KEYS[2] sent, KEYS[3] limits, KEYS[4] blocked (see sliding-window.lua)
  ARGV[1] default limit L, ARGV[2] default window W (ms), ARGV[3] guard G (ms)

  Returns { nextPermitInMs, limit, windowMs, plannedAhead }
    nextPermitInMs: when the seller's next send may go: the earliest slot already
                    handed out to a waiting row, else when a row arriving now could
                    go (0: at once).
    plannedAhead:   rows holding a slot later than now.
]]
local planKey, sentKey, limitsKey, blockedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local limit, window, guard = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

local override = redis.call('HMGET', limitsKey, 'max', 'windowMs')
if override[1] then limit = tonumber(override[1]) end
if override[2] then window = tonumber(override[2]) end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local span = window + guard

local function lthAfter(key)
  local n = redis.call('ZCOUNT', key, '(' .. (now - span), '+inf')
  if n < limit then return now end
  local lth = redis.call('ZREVRANGE', key, limit - 1, limit - 1, 'WITHSCORES')
  return tonumber(lth[2]) + span
end

local blocked = tonumber(redis.call('GET', blockedKey) or '0')
local slot
local nextPlanned = redis.call('ZRANGEBYSCORE', planKey, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
if nextPlanned[2] then
  slot = math.max(tonumber(nextPlanned[2]), blocked)
else
  slot = math.max(now, lthAfter(planKey), lthAfter(sentKey), blocked)
end
local ahead = redis.call('ZCOUNT', planKey, '(' .. now, '+inf')
return { slot - now, limit, window, ahead }
