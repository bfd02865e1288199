--[[
  lib/acquire-permit.lua: included (not run on its own) by sliding-window.lua and
  permit-next.lua. acquirePermit(...) is the whole decision of sliding-window.lua
  (see its header for the rule, the arguments and the reply), with the keys and
  arguments passed in. firstStart: true when the caller knows the row has never
  asked before (its job is on its first start), so it cannot hold a slot.
  deferKey: until when (Redis ms) the producer holds the seller's rows beyond its
  first window back (src/upload/deferral.ts): the throttle flag (the log's events)
  lasts until then at least.
  apiRuleKey: the rule the marketplace last announced for the seller (absent when
  it announces none; src/rate-limit/seller-limits.ts).
  announcing: true when answers have shown that the marketplace announces sellers'
  rules (src/rate-limit/seller-limits.ts): every seller then counts as one whose
  rule it announces, known here or not.
]]
--#include lib/seller-rule.lua

-- keepTtls(planKey, sentKey, need, fresh): gives `plan` and `sent` one TTL together, with one span to
-- spare, when `sent`'s falls short of `need` or `plan` is created anew (see keepKeys below).
local function keepTtls(planKey, sentKey, need, span, fresh)
  if fresh or redis.call('PTTL', sentKey) < need then
    redis.call('PEXPIRE', planKey, need + span)
    redis.call('PEXPIRE', sentKey, need + span)
  end
end

-- grantAtOnce(...): the row's first call when nothing stands in its way, granted now without the
-- rest of acquirePermit: most rows' call at capacity, where no seller is at its rule. It is what the
-- first call below decides in that state, in fewer steps: the row's slot is now (no slot ahead in
-- `plan`, and `plan`'s L-th newest a span back or none), `sent` holds fewer than L, and there is
-- nothing for a grant to log (the seller is not flagged throttled and no rows of it are deferred).
-- Returns nil when any of that does not hold: the caller then decides in full. The full decision
-- creates a dozen closures at every call, which alone cost Redis about 1.4 µs a row; with this path
-- permit-next.lua costs 18.6 µs a row against 20.5 without it (bench/script-cost.ts, 8 rounds).
-- sliding-window.property.int.test.ts holds both paths to the model of the rule, and
-- sliding-window.int.test.ts the states that must leave this path.
local function grantAtOnce(planKey, sentKey, member, sendId, limit, span, hold, now, planFresh, recheckReserve)
  if redis.call('ZCARD', planKey) >= limit then
    local lth = redis.call('ZREVRANGE', planKey, limit - 1, limit - 1, 'WITHSCORES')
    if tonumber(lth[2]) + span > now then return nil end
  end
  if redis.call('ZCARD', sentKey) >= limit then return nil end
  redis.call('ZADD', sentKey, now + hold, sendId)
  redis.call('ZADD', planKey, now, member)
  -- as keepKeys: no slot lies ahead, so `sent`'s need is the longer one
  keepTtls(planKey, sentKey, recheckReserve + hold + span + 1000, span, planFresh)
  return true
end

local function acquirePermit(planKey, sentKey, ruleKey, blockedKey, throttleKey, lagKey, deferKey, apiRuleKey,
                             member, sendId, defaultLimit, defaultWindow, guard, hold, hint, hintAt, suspectUntil, firstStart, announcing)
  -- a block from a 429, or the end of a window that lost writes may have hidden sends
  -- from (src/rate-limit/lost-writes.ts): no send before it. Read in one call with the
  -- throttle flag (a grant clears it only when it is set), the seller's own rule,
  -- how long its rows are deferred and whether the marketplace announces its rule.
  local flags = redis.call('MGET', blockedKey, throttleKey, ruleKey, deferKey, apiRuleKey)
  local limit, window = ruleOf(flags[3], defaultLimit, defaultWindow)

  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local span = window + guard
  -- A send due this soon is granted for that moment and the caller waits in-process,
  -- instead of a round trip through the delayed set. A woken row and the one L before
  -- it take different places in their windows' bursts through a busy pool: in a bench
  -- run a re-check found `sent` freeing 51-149 ms later for 380 of 2,000 rows (each
  -- then delayed again, a third call).
  local RESERVE_MS = math.min(150, math.floor(span / 4))
  -- A woken row (a re-check) whose place in `sent` frees a little later waits for it in-process
  -- up to this long, rather than going through the delayed set again (a third call). Each window
  -- of a big upload spreads a little wider than the one before it (its rows' places are their
  -- answer times, and answer times vary), so the last rows of a window were found freeing later
  -- than 150 ms after their slot: in bench runs with 2-20 ms of path and of answer time,
  -- single-2000 took 2.18-2.81 limiter calls per row with 150 ms for both, 1.98-2.00 with 300.
  -- On a slower host the spread grows faster (one slot a process at such answers, 16 processes
  -- to send each window of 50: its last windows spread over 500-800 ms), and 300 ms left
  -- single-2000 at 2.02-2.45 calls per row; a quarter of W + G (525 ms there), at most 1 s,
  -- gave 1.975 in every run (interleaved: 2.2 and 2.018 against 1.975 twice).
  local RECHECK_RESERVE_MS = math.min(1000, math.floor(span / 4))

  -- the latest slot handed out (now when none is ahead)
  local newest = redis.call('ZREVRANGE', planKey, 0, 0, 'WITHSCORES')
  local planTop = math.max(tonumber(newest[2] or now), now)
  -- `plan` holds no entry this call's trim would keep: a write here creates it anew, without a TTL
  local planFresh = not newest[2] or tonumber(newest[2]) <= now - span
  local blockedUntil = math.max(tonumber(flags[1] or '0'), suspectUntil or 0)
  local throttled = flags[2] ~= false
  -- the producer holds rows of the seller back until then (one window at a time)
  local deferUntil = tonumber(flags[4] or '0') or 0

  -- a job on its first start has asked for no permit before: it holds no slot (not read)
  local planned = not firstStart and redis.call('ZSCORE', planKey, member)
  -- a slot older than the span is a stale entry (not trimmed yet): the row plans afresh
  if planned and tonumber(planned) <= now - span then planned = nil end
  -- a first call with nothing in its way (see grantAtOnce)
  if not planned and planTop <= now and blockedUntil <= now and not throttled and deferUntil <= now and not (flags[5] or announcing)
      and grantAtOnce(planKey, sentKey, member, sendId, limit, span, hold, now, planFresh, RECHECK_RESERVE_MS) then
    return { 1, 0, limit, window, 0, now, now, 0, 0 }
  end

  -- the answer time a send adds to its place in `sent` (read when needed): the worker's
  -- recent hint, else the seller's moving average
  local answer
  local function answerTime()
    if not answer then
      answer = hint
      if answer < 0 or now - hintAt > span * 10 then answer = tonumber(redis.call('HGET', lagKey, 'answer') or '0') end
    end
    return answer
  end
  -- when a send still in flight is likely answered: one answer time, + 5 ms
  local function answerMargin()
    return math.ceil(answerTime()) + 5
  end
  -- What a far slot adds for the answer of the row L before it, itself a future slot: 0.7 of
  -- the answer time, + 5 ms. The guess errs short on purpose. A woken row whose place is
  -- certain to free is granted for that time (below), so a short guess costs an in-process
  -- wait of at most RECHECK_RESERVE_MS; a long one costs every later window of the upload its
  -- excess over the worker's early wake (WAKE_LEAD_MS in src/worker/processor.ts). A big upload's far
  -- slots are all planned in its first second, when answers run slow: in single-500 runs
  -- the seller's average read 48-69 ms 300 ms into the upload and 29-45 ms at its end.
  local function planMargin()
    return math.ceil(answerTime() * 0.7) + 5
  end

  -- When `sent` frees a place (now when it has room), and whether that is certain.
  -- A send still in flight holds its place until its answer, which usually comes
  -- soon: then the time returned is only when to ask again.
  local sentCount
  local function sentFreeAt()
    -- Entries older than the span are dropped once `sent` holds L (stale or not): until
    -- then its count of all entries is already below L, so the rule holds without the
    -- trim, and `plan` (which grows no faster between trims) is trimmed with it.
    sentCount = redis.call('ZCARD', sentKey)
    if sentCount >= limit then
      sentCount = sentCount - redis.call('ZREMRANGEBYSCORE', sentKey, '-inf', now - span)
      redis.call('ZREMRANGEBYSCORE', planKey, '-inf', now - span)
    end
    if sentCount < limit then return now, true end
    local lth = redis.call('ZREVRANGE', sentKey, limit - 1, limit - 1, 'WITHSCORES')
    local score = tonumber(lth[2])
    if score > now then return now + math.min(score - now + span, math.max(20, answerMargin())), false end
    return score + span, true
  end

  -- A marketplace that announces sellers' rules tells of a seller's rule, and of a change to it,
  -- only in its answers: a rule lower than the one here (a seller's first, or one lowered while
  -- it sent nothing) is not known yet, and a burst would leave under the old rule and meet 429s.
  -- When no send of such a seller was answered in the last span, one send goes (the only one in
  -- flight) and the rest wait for its answer, which writes the rule in force before it is
  -- counted (src/worker/processor.ts). Returns when to ask again while that send is out, else
  -- nil. The one send is safe under any rule: none of the seller's sends lies in the span before it.
  local function firstAnswerAt()
    if not (flags[5] or announcing) or redis.call('ZCOUNT', sentKey, '(' .. (now - span), now) > 0 then return nil end
    local out = redis.call('ZRANGEBYSCORE', sentKey, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if not out[2] then return nil end
    -- its answer is likely one answer time after it went (its place is its send + hold). Once
    -- that is past, ask again after as long as it has been out (at least 20 ms and one answer
    -- time): a few asks per row even while the answer time is not known yet, until it is
    -- answered or its hold runs out
    local sentAt = tonumber(out[2]) - hold
    local expected = sentAt + answerMargin()
    if expected > now then return expected end
    return now + math.max(20, answerMargin(), now - sentAt)
  end

  local function planTtl()
    return planTop - now + span + 1000
  end
  -- the throttle flag lasts while rows are planned ahead or deferred
  local function throttleTtl()
    return math.max(planTtl(), deferUntil - now + span + 1000)
  end

  -- Gives `plan` and `sent` one TTL together: at least the longer of their needs
  -- (`plan` its latest slot's span, `sent` a grant's place while in flight and its
  -- span). Only `sent`'s TTL is read, and both are written when it falls short,
  -- then with one span to spare: a busy seller's keys get a PEXPIRE (a write, which
  -- Redis also sends to replicas and the AOF) about once a span, not at every grant.
  -- `sent` is the one whose early end could let a send through; `plan` only orders
  -- the rows (an entry of it gone early costs a re-check, never the rule), and is
  -- written the TTL whenever this call creates it.
  local function keepKeys()
    keepTtls(planKey, sentKey, math.max(planTtl(), RECHECK_RESERVE_MS + hold + span + 1000), span, planFresh)
  end

  -- Throttled and released are the log's events (src/progress/progress-log.ts): throttled
  -- when the seller's window is full, released by its next grant; one of each a window.
  -- fullFor() says how long until the seller's next send may go when that is more than a
  -- quarter of a span (its window is full), else nil: a span after its L-th newest send, which
  -- within a window's burst is the window before's next place to free, a moment away, and
  -- after the grant that fills it the window's own first, a span away (one still in flight
  -- counted from its grant). At half a span, a window that a slow pool took longer than that
  -- to fill was never logged throttled, though its seller then waited for its rule: 4 cold
  -- processes filled 20 rows in 400-500 ms, at 20 per 1 s + 100 ms.
  local function fullFor()
    local lth = redis.call('ZREVRANGE', sentKey, limit - 1, limit - 1, 'WITHSCORES')
    if not lth[2] then return nil end
    local place = tonumber(lth[2])
    if place > now then place = place - hold end
    local nextIn = place + span - now
    if nextIn > span / 4 then return nextIn end
    return nil
  end

  -- Grants a send at `at` (now, or a moment later: the caller waits until then).
  local function grant(at, slot, recheck)
    at = math.max(at, now)
    redis.call('ZADD', sentKey, at + hold, sendId)
    redis.call('ZADD', planKey, at, member)
    local event, next = 0, 0
    if throttled then
      -- flagged throttled, the seller sends again: released. Only that, also when this grant
      -- fills the window again: a throttle here would take the release's place in the log
      -- (throttled twice in a row); the next grant that fills the window says so
      redis.call('DEL', throttleKey)
      event = 2
    -- the grant that fills the seller's window makes it throttled when rows of it wait: planned
    -- for later, or held back by the producer (with `sent` below L after it, nothing is read)
    elseif (planTop > at or deferUntil > now) and (sentCount or limit) + 1 >= limit then
      local nextIn = fullFor()
      if nextIn then
        redis.call('SET', throttleKey, '1', 'PX', throttleTtl())
        event, next = 1, nextIn
      end
    end
    planTop = math.max(planTop, at)
    -- no entry of `sent` lies past now + RECHECK_RESERVE_MS + hold (a grant's place while in flight;
    -- an answered send's place is its answer time)
    keepKeys()
    return { 1, at - now, limit, window, event, now, slot, recheck, next }
  end

  -- record: the row's first call, its slot is written to `plan`; quiet: the wait is not the
  -- seller's rule (it waits for a first answer), so the seller is not flagged throttled
  local function wait(untilMs, slot, record, quiet)
    local event = 0
    if record then
      redis.call('ZADD', planKey, untilMs, member)
      planTop = math.max(planTop, untilMs)
      keepKeys()
      -- a row planned while the seller's window is full (or blocked) makes it throttled; one
      -- planned within a window's burst does not (the next grant would release it again)
      if not quiet then
        if throttled then redis.call('PEXPIRE', throttleKey, throttleTtl())
        elseif blockedUntil > now or fullFor() then
          redis.call('SET', throttleKey, '1', 'PX', throttleTtl())
          event = 1
        end
      end
    end
    return { 0, untilMs - now, limit, window, event, now, slot, record and 0 or 1, 0 }
  end

  if planned then
    -- a re-check: the row already holds a slot
    planned = tonumber(planned)
    if planned > now + RESERVE_MS then return wait(planned, planned, false) end
    if blockedUntil > now then return wait(blockedUntil, planned, false) end
    local answerAt = firstAnswerAt()
    if answerAt then return wait(answerAt, planned, false) end
    local free, certain = sentFreeAt()
    -- the slot was planned with an answer time that was a guess (planMargin): once `sent`
    -- says for certain when a place frees, that time is the row's, earlier or later
    local due = certain and free or math.max(planned, free)
    if certain and due <= now + RECHECK_RESERVE_MS then return grant(due, planned, 1) end
    return wait(due, planned, false)
  end

  -- a row's first call: plan its slot
  local slot = now
  local lth = redis.call('ZREVRANGE', planKey, limit - 1, limit - 1, 'WITHSCORES')
  if lth[2] then
    local before = tonumber(lth[2])
    slot = math.max(slot, before + span)
    if before > now then slot = slot + planMargin() end
  end
  -- never ahead of a row planned before it: slots are handed out in order
  slot = math.max(slot, blockedUntil, planTop)
  if slot <= now + RESERVE_MS then
    local answerAt = firstAnswerAt()
    if answerAt then
      slot = math.max(slot, answerAt)
      return wait(slot, slot, true, true)
    end
    local free, certain = sentFreeAt()
    local due = math.max(slot, free)
    if certain and due <= now + RESERVE_MS then return grant(due, due, 0) end
    slot = due
  end
  return wait(slot, slot, true)
end
