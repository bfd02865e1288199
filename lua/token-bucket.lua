--[[
  token-bucket.lua: a token bucket on Redis's clock (the Spring Cloud Gateway
  design). A comparison for the bench, not the product's limiter: a full
  bucket plus its refill lets 2L - 1 through in one window.

  KEYS[1] bucket  hash  tokens, ts (ms); PEXPIRE 2W
  ARGV[1] capacity L (also the refill per window)
  ARGV[2] window W (ms)

  Returns { granted (1|0), waitMs (until one token is there) }
]]
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1] or limit)
local ts = tonumber(state[2] or now)
tokens = math.min(limit, tokens + (now - ts) * limit / window)
local granted, waitMs = 0, 0
if tokens >= 1 then
  tokens = tokens - 1
  granted = 1
else
  waitMs = math.ceil((1 - tokens) * window / limit)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], window * 2)
return { granted, waitMs }
