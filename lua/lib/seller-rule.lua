--[[
  lib/seller-rule.lua: included (not run on its own) where
  `--#include lib/seller-rule.lua` stands.

  sellerRule(limitsKey, limit, window): the seller's L and W: its override in
  the `limits` hash (`limits set`), else the defaults given.
]]
local function sellerRule(limitsKey, limit, window)
  local override = redis.call('HMGET', limitsKey, 'max', 'windowMs')
  return tonumber(override[1] or limit), tonumber(override[2] or window)
end
