--[[
  permit-next.lua: the permit for the row BullMQ has just handed a worker, asked
  in the same socket write that finished the worker's previous row. BullMQ's
  completion fetches the next job and locks it with the finishing worker's
  token; this call, written right behind it, finds that job, names its row (from the
  job's name and id, src/queue-shards.ts) and
  runs the seller's limiter for it (lib/acquire-permit.lua), so the worker
  starts the row with its permit in hand instead of asking in a round trip of
  its own.

  It reads keys it cannot name in advance (the job's hash and lock, the seller's
  limiter keys). On a single Redis any key will do. On Redis Cluster they must
  lie in the queue's slot: a seller pinned to the queue's shard has its keys
  under the shard's tag, and its jobs say so (`home`, src/seller-home.ts); any
  other job gets no permit here (ARGV[15]) and asks with sliding-window.lua.

  KEYS[1] BullMQ's active list of the registrations queue

  ARGV[1] BullMQ's job key prefix ("{prefix}:registrations:")
  ARGV[2] the worker's lock token
  ARGV[3] the limiter's key namespace (QUEUE_PREFIX without braces; see src/keys.ts)
  ARGV[4] nonce: the send id is "{member}#{nonce}"
  ARGV[5] seller id prefix: only a seller whose id starts with it gets a permit
          here ("" for all; the bench runs several limiters in one pool)
  ARGV[6..11] L, W (ms), G (ms), hold (ms), answer hint (ms, -1: none), when the
          hint was measured (Redis ms): as ARGV[3..8] of sliding-window.lua
  ARGV[13] suspect until (Redis ms, 0: none): as ARGV[9] of sliding-window.lua
  ARGV[12] the id of the job just finished: never the one asked for (should this
          call ever run before BullMQ's completion, that job is still active)
  ARGV[14] how many such asks the worker wrote together, behind their completions
          (default 1): how deep in the active list the job may lie
  ARGV[15] 1: only a job whose seller is pinned to this queue's shard gets a permit
          here (Redis Cluster); else any
  ARGV[16] where in the active list the job should lie (0: the head; default 0),
          below ARGV[14]
  ARGV[17] 1: answers have shown that the marketplace announces sellers' rules
          (default 0): as ARGV[10] of sliding-window.lua

  Returns {} when no job that deep in the active list is locked with this token
  (BullMQ fetched none, or another worker's came in between), is the finished one, or
  its seller is not covered; else { jobId, sendId, ...the reply of sliding-window.lua, sellerId, home }
  (home: the tag the seller's keys carry, "" for its own).
]]
--#include lib/acquire-permit.lua
local jobPrefix, token, ns, nonce, sellerPrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

-- BullMQ pushes the job it fetches to the head of the active list. When several of
-- the worker's completions went in one write, their asks follow them all: the k-th
-- from last ask's job lies k - 1 behind the head, so an ask looks at most `depth`
-- deep (its write's asks) for the job locked with its token.
local function lockedHere(id)
  return id and id ~= ARGV[12] and redis.call('GET', jobPrefix .. id .. ':lock') == token
end
-- The worker says where its job should lie (ARGV[16]): the completions went in the order of
-- their asks, so the k-th from last ask's job lies k - 1 behind the head when each completion
-- fetched a job. It is looked at first: scanning from the head read 7.5 job locks per row in
-- the bench's capacity scenario, this reads 2.4 (in one run each). A completion that fetched
-- nothing (the queue running dry at a run's end), or another's write read in between, moves
-- it; then the rest are looked at.
local depth = math.min(tonumber(ARGV[14] or '1'), 64)
local expected = math.min(tonumber(ARGV[16] or '0'), depth - 1)
local jobId = redis.call('LINDEX', KEYS[1], expected)
if not lockedHere(jobId) then
  jobId = nil
  if depth > 1 then
    for i, id in ipairs(redis.call('LRANGE', KEYS[1], 0, depth - 1)) do
      if i - 1 ~= expected and lockedHere(id) then jobId = id break end
    end
  end
  if not jobId then return {} end
end
local jobKey = jobPrefix .. jobId
-- with the job's starts so far (BullMQ counts each, `ats`): 1 is its first, when
-- it has asked for no permit before (a delay, a retry or a stalled run starts it again)
local fields = redis.call('HMGET', jobKey, 'name', 'ats')
local firstStart = fields[2] == '1'
-- the row, named by the job's name and id (src/queue-shards.ts, jobNameFor and jobIdFor)
-- without reading its data, which holds the product; a job named otherwise (enqueued by an
-- earlier version) is read from the front of its JSON (src/upload/enqueue-upload.ts), and
-- any other layout is decoded
local sellerId, home = string.match(fields[1] or '', '^register:([%w_%-]+):?(.*)$')
local uploadId, row = string.match(jobId, '^(.+)-(%d+)$')
if not (sellerId and uploadId) then
  local data = redis.call('HGET', jobKey, 'data') or ''
  local after
  sellerId, uploadId, row, after = string.match(data, '^{"sellerId":"([%w_%-]+)","uploadId":"([^"\\]+)","row":(%d+)()[,}]')
  if sellerId then
    home = string.match(data, '^,"home":"([^"\\]+)"', after)
  else
    local ok, decoded = pcall(cjson.decode, data)
    if not ok or type(decoded) ~= 'table' or type(decoded.sellerId) ~= 'string' or decoded.uploadId == nil or decoded.row == nil then return {} end
    sellerId, uploadId, row, home = decoded.sellerId, decoded.uploadId, decoded.row, decoded.home
  end
end
if string.sub(sellerId, 1, #sellerPrefix) ~= sellerPrefix then return {} end
-- the seller's keys under its shard's tag: only when that is this queue's (its slot)
if type(home) ~= 'string' or home == '' then home = nil end
if home and not string.find(jobPrefix, '{' .. home .. '}', 1, true) then return {} end
if ARGV[15] == '1' and not home then return {} end

-- the row's member and the seller's keys, named as src/keys.ts names them
local member = uploadId .. ':' .. string.format('%d', tonumber(row))
local base = home and (ns .. ':rl:{' .. home .. '}:' .. sellerId .. ':') or (ns .. ':rl:{' .. sellerId .. '}:')
local sendId = member .. '#' .. nonce
local reply = acquirePermit(base .. 'plan', base .. 'sent', base .. 'rule', base .. 'blocked', base .. 'throttle', base .. 'lag', base .. 'defer', base .. 'api-rule',
  member, sendId, tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]),
  tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[13] or '0'), firstStart, ARGV[17] == '1')
table.insert(reply, 1, sendId)
table.insert(reply, 1, jobId)
table.insert(reply, sellerId)
table.insert(reply, home or '')
return reply
