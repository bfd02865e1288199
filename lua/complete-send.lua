--[[
  complete-send.lua: a row's request has been answered (or has failed): move the
  send's place in the window to the completion time and, when the row reached
  its final outcome, count it for its upload. One call, one seller's hash tag.

  KEYS[1] plan     zset  (see sliding-window.lua)
  KEYS[2] sent     zset  (see sliding-window.lua)
  KEYS[3] upload   hash  the upload's counters: total, registered, duplicate, failed, cancelled
  KEYS[4] rows     hash  row number -> final outcome JSON (first outcome wins)
  KEYS[5] lag      hash    (see sliding-window.lua): `answer` updated from this answer
  KEYS[6] rule     string  (see sliding-window.lua)
  KEYS[7] blocked  string  (see sliding-window.lua)

  ARGV[1] row member   "{uploadId}:{row}"
  ARGV[2] send id      the entry added to `sent` by the grant ("" when nothing was sent)
  ARGV[3] row number
  ARGV[4] outcome      "registered" | "duplicate" | "failed" | "cancelled" | "" (not final: a retry follows)
  ARGV[5] outcome JSON stored for the row (status, productId, reason)
  ARGV[6] default limit L
  ARGV[7] default window W (ms)
  ARGV[8] guard G (ms)
  ARGV[9] retention (s) of the upload's keys
  ARGV[10] 1: report nextPermitInMs when a progress line is due; 0: never (no one logs it)
  ARGV[11] when the send went (Redis ms: its grant's slot, as the grant set it in `plan`),
           as the granting worker noted it; -1: unknown (read from `plan`)
  ARGV[12] 1: this answer time joins the seller's average in `lag` (or starts it);
           0: `lag` is not touched (the worker sends every planned row's and a
           sample of the others': the average is a margin for planning, and a read
           and a write per row buy it nothing)
  ARGV[13] how long before issuing this call the answer reached the worker (ms, its
           monotonic clock; 0: no answer came, or unknown)
  ARGV[14] 1: the permit was not used, its call never left (the seller was paused, the
           upload cancelled or the API found down after the grant): the send is taken out
           of `sent` (default 0)
  ARGV[15] hold (ms): how long a send in flight holds its place (for the progress line's pace)

  A row cancelled before it was sent (no send id, outcome "cancelled") has its
  plan entry removed: no send will use that slot.

  A permit not used (ARGV[14]) holds no place: its entry leaves `sent`, as no
  call went. Given back with its place moved to now instead, as an answer's is,
  it took one of the seller's L places for a whole W + G: a seller resumed just
  as its rows came back from the pause (some processes still reading the pause,
  giving back the permits of the rows promoted to them) then sent nothing for
  one window.

  The send's score is set to when its answer came, on Redis's clock: now less
  ARGV[13]. It was the grant + hold while in flight, and the API timed the
  request at or before its answer. ARGV[13] is measured by the worker up to the
  moment it issues this call; the call's way here only adds to now, so the
  place is at or after the answer's arrival, never before. Counting from the
  completion's own time instead added the worker's handling of the answer and
  the call's queueing to every place (in a traced bench run: 4 ms at the median,
  18 ms at p90, 86 ms at most), and each window of a big upload opens a span
  after the one before's last place. The row's plan entry stays at its slot:
  `plan` only orders the rows, and `sent` alone decides a grant, so moving it
  to the answer too (a ZADD per row, about 4 µs of the script's 30 in
  bench/script-cost.ts) bought nothing. A row is counted once, whatever the
  re-runs.
  The grant gave both sets a TTL of at least their newest entry + W + G + 1 s,
  which still covers an entry moved up by less than 1 s; an answer that took
  longer (a stalled worker) has `sent`'s TTL checked and raised here. `plan`'s
  needs no check: its entries do not move, and the grant's TTL covers them.

  Returns { counted (1|0), total, registered, duplicate, failed, now, nextPermitInMs, plannedAhead, recentSends, recentSpanMs, cancelled, placed }
    nextPermitInMs: when this row's count crosses a 10 % step of an unfinished
    upload (the worker then logs a progress line), when the seller's next send
    may go (see lib/next-permit.lua); otherwise -1. With it, for the line's pace:
    plannedAhead (rows holding a later slot) and recentSends/recentSpanMs (see
    lib/next-permit.lua); otherwise -1.
]]
--#include lib/seller-rule.lua
--#include lib/next-permit.lua
local planKey, sentKey, uploadKey, rowsKey, lagKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local member, sendId, row, outcome, detail = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local span, retention = tonumber(ARGV[7]) + tonumber(ARGV[8]), tonumber(ARGV[9])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- the send's place: when its answer came (see above)
local placed = now
local unsent = ARGV[14] == '1'
if sendId ~= '' and unsent then
  redis.call('ZREM', sentKey, sendId)
elseif sendId ~= '' then
  -- the grant set the row's plan entry to its send time: the answer took placed - that
  local sentAt = tonumber(ARGV[11] or '-1')
  if sentAt < 0 then sentAt = tonumber(redis.call('ZSCORE', planKey, member) or '-1') end
  -- never before the send's own slot
  placed = math.max(now - math.max(0, math.floor(tonumber(ARGV[13] or '0') or 0)), sentAt)
  redis.call('ZADD', sentKey, 'XX', placed, sendId)
  if ARGV[12] ~= '0' and sentAt >= 0 and placed >= sentAt and placed - sentAt < span then
    -- moving average of the API's answer time; a single stall moves it only a fifth of the way
    -- (the average starts afresh every 10 spans: its TTL is set when it is created). A sample
    -- joins it, or starts it when there is none.
    local old = tonumber(redis.call('HGET', lagKey, 'answer') or '-1')
    local lag = placed - sentAt
    if old >= 0 then lag = math.floor(old * 0.8 + lag * 0.2) end
    redis.call('HSET', lagKey, 'answer', lag)
    if old < 0 then redis.call('PEXPIRE', lagKey, span * 10) end
  end
  -- the grant's TTL covers an entry moved up by less than 1 s (see above): checked from 0.9 s
  if sentAt < 0 or now - sentAt >= 900 then
    local ttl = redis.call('PTTL', sentKey)
    if ttl >= 0 and ttl < span + 1000 then redis.call('PEXPIRE', sentKey, span + 1000) end
  end
end

if (sendId == '' or unsent) and outcome == 'cancelled' then
  -- a row cancelled before it was sent gives up its slot: the seller's later rows (a sheet
  -- uploaded again after the cancel) are planned behind the rows still to go, not behind
  -- slots no row will use. `plan` only orders the rows; `sent` alone decides a grant.
  redis.call('ZREM', planKey, member)
end

local c = redis.call('HMGET', uploadKey, 'total', 'registered', 'duplicate', 'failed', 'cancelled')
local counted = 0
if outcome ~= '' and c[1] then
  -- the upload exists (its counters expire with it): count the row once
  if redis.call('HSETNX', rowsKey, row, detail) == 1 then
    redis.call('HINCRBY', uploadKey, outcome, 1)
    counted = 1
    local field = ({ registered = 2, duplicate = 3, failed = 4, cancelled = 5 })[outcome]
    if field then c[field] = tonumber(c[field] or '0') + 1 end
  end
end

local total = tonumber(c[1] or '0')
local registered, duplicate, failed = tonumber(c[2] or '0'), tonumber(c[3] or '0'), tonumber(c[4] or '0')
local cancelled = tonumber(c[5] or '0')
local done = registered + duplicate + failed + cancelled
-- a 10 % step of the upload: a progress line is due
local step = counted == 1 and total > 0 and math.floor(done * 10 / total) > math.floor((done - 1) * 10 / total)
if counted == 1 and (done == 1 or step or done >= total) then
  -- the row counts are kept `retention` after the upload's last step; the first row
  -- counted created the rows hash (the counters and the rows are written together)
  redis.call('EXPIRE', rowsKey, retention)
  redis.call('EXPIRE', uploadKey, retention)
end
local nextInMs, ahead, recentSends, recentSpan = -1, -1, -1, -1
if ARGV[10] == '1' and step and done < total then
  local flags = redis.call('MGET', KEYS[6], KEYS[7])
  local limit, window = ruleOf(flags[1], tonumber(ARGV[6]), tonumber(ARGV[7]))
  local nextAt
  nextAt, ahead, recentSends, recentSpan = sellerPace(planKey, sentKey, limit, window + tonumber(ARGV[8]), tonumber(ARGV[15] or '0'), tonumber(flags[2] or '0'), now)
  nextInMs = nextAt - now
end
return { counted, total, registered, duplicate, failed, now, nextInMs, ahead, recentSends, recentSpan, cancelled, placed }
