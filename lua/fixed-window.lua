--[[
  fixed-window.lua: the fixed-window counter that expires at its first hit.
  A comparison for the bench, not the product's limiter: 2L sends can pass
  within a moment across a window boundary, and every reset wakes the herd.

  KEYS[1] counter  string  sends in the current window (seller-tagged), PEXPIRE W at the first hit
  ARGV[1] limit L
  ARGV[2] window W (ms)

  Returns { granted (1|0), waitMs (the counter's TTL when denied) }
]]
local n = redis.call('INCR', KEYS[1])
local window = tonumber(ARGV[2])
if n == 1 then redis.call('PEXPIRE', KEYS[1], window) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
end
if n <= tonumber(ARGV[1]) then return { 1, 0 } end
return { 0, ttl }
