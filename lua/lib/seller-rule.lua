--[[
  lib/seller-rule.lua: included (not run on its own) where
  `--#include lib/seller-rule.lua` stands.

  ruleOf(value, limit, window): the seller's L and W from its `rule` string
  ("{max}/{windowMs}", written by `limits set`), else the defaults given.
  sellerRule(ruleKey, limit, window): the same, reading the key.
]]
local function ruleOf(value, limit, window)
  if value then
    local max, windowMs = string.match(value, '^(%d+)/(%d+)$')
    if max then return tonumber(max), tonumber(windowMs) end
  end
  return limit, window
end

local function sellerRule(ruleKey, limit, window)
  return ruleOf(redis.call('GET', ruleKey), limit, window)
end
