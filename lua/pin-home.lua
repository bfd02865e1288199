--[[
  pin-home.lua: a seller's pin on Redis Cluster (src/seller-home.ts), read, or
  chosen and written, in one call in the seller's own slot.

  KEYS[1]  the pin, "{ns}:home:{seller}"
  KEYS[2..] keys of the seller under its own tag that mark it as from before pins
           existed: its window, its rules, its kept uploads' counters

  ARGV[1]  the queue prefix to pin a new seller to (the shard its id hashes to)

  Returns the pin: a queue prefix, or "" when the seller keeps its own tag. A pin
  once written is never changed here.
]]
local pin = redis.call('GET', KEYS[1])
if pin then return pin end
pin = ARGV[1]
if #KEYS > 1 and redis.call('EXISTS', unpack(KEYS, 2)) > 0 then pin = '' end
redis.call('SET', KEYS[1], pin)
return pin
