--[[
  lib/next-permit.lua: included (not run on its own) by peek-permit.lua and
  complete-send.lua, where `--#include lib/next-permit.lua` stands. Read-only.

  sellerPace(planKey, sentKey, limit, span, hold, blockedUntil, now) returns four values:
    nextAt: when the seller's next send may go: the earliest slot already handed
      out to a waiting row, else when a row arriving now could go (now: at once);
    ahead: how many rows hold a slot later than now;
    recentSends, recentSpanMs: the sends in the last span, and how long ago the
      oldest of them went (0 when none).
  A send that has gone is in `sent` at its answer time, or at its grant + hold
  while in flight (hold: the API timeout). A grant for a moment a little ahead
  (the worker waits for it in-process) is at that moment + hold, beyond now +
  hold: it has not gone yet and is not among the recent sends. Counted with
  them, it met the sends of the window before still in the span (the grant is
  for the moment the oldest of them leaves it), and a seller at its rule read
  up to 2L sent in the last window.
  A progress line asks for all four, so they share their reads: with no row
  planned ahead (a seller below its rule) it makes 3 or 4 calls, where
  asking for each figure on its own made 5 or 6.
]]
local function sellerPace(planKey, sentKey, limit, span, hold, blockedUntil, now)
  local since = '(' .. (now - span)
  -- every entry in the span, grants for a moment ahead included: what the rule counts
  local inSpan = redis.call('ZCOUNT', sentKey, since, '+inf')
  local recent, recentSpan = 0, 0
  if inSpan > 0 then
    recent = redis.call('ZCOUNT', sentKey, since, now + hold)
    local oldest = redis.call('ZRANGEBYSCORE', sentKey, since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    recentSpan = math.max(0, now - tonumber(oldest[2]))
  end
  local nextPlanned = redis.call('ZRANGEBYSCORE', planKey, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if nextPlanned[2] then
    return math.max(tonumber(nextPlanned[2]), blockedUntil), redis.call('ZCOUNT', planKey, '(' .. now, '+inf'), recent, recentSpan
  end
  -- nothing planned ahead: a row arriving now goes once `plan` and `sent` each hold fewer than L in the span
  local function lthAfter(key, count)
    if count < limit then return now end
    local lth = redis.call('ZREVRANGE', key, limit - 1, limit - 1, 'WITHSCORES')
    return tonumber(lth[2]) + span
  end
  local nextAt = math.max(now, lthAfter(planKey, redis.call('ZCOUNT', planKey, since, '+inf')), lthAfter(sentKey, inSpan), blockedUntil)
  return nextAt, 0, recent, recentSpan
end
