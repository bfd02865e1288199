--[[
  sliding-window.lua: ask for a permit to send one registration for one seller.

  Every key carries the seller's hash tag ({sellerId}), so one call touches one
  cluster slot. Time is Redis's clock (TIME), in ms. Every key the call writes
  has a TTL that covers its entries when the call returns (PEXPIRE in the same
  call where it fell short).

  KEYS[1] plan      zset  row member -> slot handed out (then when it was sent)
  KEYS[2] sent      zset  send id -> place in the window: send time + hold while the
                          request is in flight, its completion time once answered
  KEYS[3] rule      string  the seller's own rule "{max}/{windowMs}" (`limits set`; absent: defaults)
  KEYS[4] blocked   string  until when (ms) the API asked us to wait (429 Retry-After)
  KEYS[5] throttle  string  present while the seller is throttled (for the log event)
  KEYS[6] lag       hash    `answer`: moving average (ms) of the API's answer time
                            (kept by complete-send.lua)
  KEYS[7] defer     string  until when (ms) the producer holds rows of the seller
                            beyond its first window back (src/upload/deferral.ts)
  KEYS[8] api-rule  string  the rule the marketplace last announced for the seller
                            (absent when it announces none)

  ARGV[1] row member   "{uploadId}:{row}"; identifies the row's plan entry
  ARGV[2] send id      unique per HTTP attempt; the entry added to `sent` on grant
  ARGV[3] default limit L
  ARGV[4] default window W (ms)
  ARGV[5] guard G (ms)
  ARGV[6] hold (ms): how long an unanswered send keeps its place (the API timeout)
  ARGV[7] answer hint (ms, -1: none): the answer time of rows sent at their
          planned slot, as the calling worker saw it lately (on Redis's clock)
  ARGV[8] when that hint was last measured (Redis ms); older than 10 (W + G): unused
  ARGV[9] suspect until (Redis ms, 0: none): this Redis may have lost writes
          (a failover or a restart), and with them sends of this seller's
          window; no send is granted before it (src/rate-limit/lost-writes.ts)
  ARGV[10] 1: answers have shown that the marketplace announces sellers' rules
          (default 0); see below

  A send due within RESERVE_MS (150 ms, at most (W + G) / 4; for a re-check
  300 ms, at most (W + G) / 4) is granted at once for that moment: its place is
  reserved, and waitMs tells the caller how long to wait before sending.

  Rule: a send is granted at `now` only if fewer than L entries of `sent` lie in
  (now - (W + G), +inf): any L + 1 consecutive sends are then >= W + G apart.

  A row's first call (no plan entry) gets a slot = max(now, L-th newest plan
  entry + W + G, blocked, the latest slot already handed out); if that is now and
  `sent` has room it is granted, otherwise the slot is recorded and the wait
  returned. When the L-th newest plan entry is itself a future slot, that row's
  place in `sent` will be its answer time, about one answer time after it is
  sent, so the new slot is set that much later (+ 5 ms): the row then finds
  `sent` free when it wakes instead of being re-delayed (at most 2 calls per
  row). The answer time is the worker's hint when it has a recent one, else the
  seller's moving average (`answer` in `lag`). The hint is the better guess: a
  big upload plans its far windows in one burst, while the pool is busy with
  that very burst, so the seller's own answers of that moment run long (44-82
  ms against 20-24 ms once calm, in bench runs), and each window would start
  that much late; the rows are sent later, when the pool is calm, as the hint's rows
  were. A guess too short costs calls (rows wake early and wait again), never
  the rule: `sent` alone decides a grant. How late
  rows wake needs no allowance: a row and the one L before it wake about equally
  late (the same pool, the same place in their window's burst), what differs is
  taken up by the in-process wait of a reserved grant, and the workers see that
  Redis wakes delayed rows on time (src/worker/wake-kick.ts). A later call (the row
  has a plan entry) is a re-check: before its slot or while blocked it waits the
  rest; otherwise it is granted if `sent` has room, else it waits until `sent`
  frees. O(log n) per call, no loops. A call that changes a set makes sure its
  TTL covers every entry (`plan` and `sent` share one, raised with one W + G to
  spare only when `sent`'s falls short or the call creates `plan`); a call that
  changes nothing leaves the TTLs as they are.

  A marketplace that announces sellers' rules (KEYS[8] set, or ARGV[10] 1) tells
  of a lower one only in its answers. When none of the seller's sends was
  answered in the last W + G, one send goes first: while it is out, every other
  row of the seller waits for its answer (which writes the rule in force before
  the row is counted), asking again one answer time after it went, then after
  as long as it has been out. Such a wait does not flag the seller throttled.

  Returns { granted (1|0), waitMs, limit, windowMs, event, now, slot, planned (1|0), next }
    waitMs: granted: wait this long, then send; denied: ask again after this long.
    event: 0 none, 1 the seller became throttled (its window is full: the grant
           that fills it, or a row planned while it is full or blocked), 2 the
           seller was released (its first grant after that): one of each a window.
    now:   Redis's clock (ms) at the decision.
    slot:  the row's planned slot (ms).
    planned: 1 when the row already held a slot (a re-check): a grant then is a
             send at its planned time, whose answer time the worker learns from.
    next:  with event 1 on a grant (the seller's window is full): ms until the
           seller's next send may go; 0 otherwise.
]]
--#include lib/acquire-permit.lua
return acquirePermit(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8],
  ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]),
  tonumber(ARGV[7] or '-1'), tonumber(ARGV[8] or '0'), tonumber(ARGV[9] or '0'), false, ARGV[10] == '1')
