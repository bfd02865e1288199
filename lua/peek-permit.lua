--[[
  peek-permit.lua: when could a new row of this seller be sent? Read-only.

  KEYS[1] plan, KEYS[2] sent, KEYS[3] rule, KEYS[4] blocked, KEYS[5] defer (see sliding-window.lua)
  ARGV[1] default limit L, ARGV[2] default window W (ms), ARGV[3] guard G (ms),
  ARGV[4] hold (ms): how long a send in flight holds its place (the API timeout)

  Returns { nextPermitInMs, limit, windowMs, plannedAhead, recentSends, recentSpanMs, deferredMs, inFlight }
    nextPermitInMs: see sellerPace in lib/next-permit.lua (0: at once).
    plannedAhead:   rows holding a slot later than now.
    recentSends, recentSpanMs: see sellerPace in lib/next-permit.lua.
    deferredMs:     how much longer the producer holds rows of the seller back (0: none).
    inFlight:       sends granted and not answered yet.
]]
--#include lib/seller-rule.lua
--#include lib/next-permit.lua
local planKey, sentKey, ruleKey, blockedKey, deferKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local limit, window = sellerRule(ruleKey, tonumber(ARGV[1]), tonumber(ARGV[2]))
local span = window + tonumber(ARGV[3])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local blocked = tonumber(redis.call('GET', blockedKey) or '0')
local slot, ahead, recentSends, recentSpan = sellerPace(planKey, sentKey, limit, span, tonumber(ARGV[4]), blocked, now)
local deferred = math.max(0, tonumber(redis.call('GET', deferKey) or '0') - now)
local inFlight = redis.call('ZCOUNT', sentKey, '(' .. now, '+inf')
return { slot - now, limit, window, ahead, recentSends, recentSpan, deferred, inFlight }
