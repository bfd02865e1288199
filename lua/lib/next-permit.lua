--[[
  lib/next-permit.lua: included (not run on its own) by peek-permit.lua and
  complete-send.lua, where `--#include lib/next-permit.lua` stands.

  nextPermitAt(planKey, sentKey, limit, span, blockedUntil, now): when the
    seller's next send may go: the earliest slot already handed out to a waiting
    row, else when a row arriving now could go (now: at once). Read-only.
]]
local function nextPermitAt(planKey, sentKey, limit, span, blockedUntil, now)
  local nextPlanned = redis.call('ZRANGEBYSCORE', planKey, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if nextPlanned[2] then return math.max(tonumber(nextPlanned[2]), blockedUntil) end
  local function lthAfter(key)
    if redis.call('ZCOUNT', key, '(' .. (now - span), '+inf') < limit then return now end
    local lth = redis.call('ZREVRANGE', key, limit - 1, limit - 1, 'WITHSCORES')
    return tonumber(lth[2]) + span
  end
  return math.max(now, lthAfter(planKey), lthAfter(sentKey), blockedUntil)
end

local function recentSends(sentKey, span, now)
  local n = redis.call('ZCOUNT', sentKey, '(' .. (now - span), '+inf')
  if n == 0 then return { 0, 0 } end
  local oldest = redis.call('ZRANGEBYSCORE', sentKey, '(' .. (now - span), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return { n, math.max(0, now - tonumber(oldest[2])) }
end
