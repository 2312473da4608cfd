-- reserve claims the earliest start every rule of a domain allows, as
-- Memory.ReserveAt and keyState.commit do; told to report, it claims
-- nothing and reports the domain, as keyState.state does. So the one
-- schedule.go decision (keyState.earliest) is written once, here.
--
-- It runs once per request, so its common path defines no functions,
-- builds no tables but its reply, and calls few: in Redis's Lua a closure,
-- a table or a call costs more than the arithmetic of a reservation: with
-- helper functions and tables for the rule and the state, the same work
-- took 60% longer. Times are integer microseconds on the clock that
-- clock() reads; tokens are floats.
--
-- KEYS[1] is the domain's state hash; KEYS[1+i] is the list of the latest
-- starts in quota i's window, oldest first, at most as many as the quota
-- allows. A list's key names its quota (requests and window), so workers
-- whose quota lists differ share the lists of the quotas they share. The hash has one field, s: a MessagePack stream (cmsgpack) of
-- these values, so that a call reads and writes one small value; cancel
-- and pause write it too:
--   tk, ta  the bucket's tokens at time ta; nil when the bucket is full
--   l       the latest start; nil when none
--   p       paused until
--   qa      quiet at: from then on the state is as good as a fresh one
--   seq     the latest reservation's number, below 2^32
--   sig     '' (older scripts kept the quotas' sizes here)
--   xa      when the keys expire
--   utk, uta, ul, uqa
--           while the latest reservation can be undone, the tk, ta, l and
--           qa before it; uqa is nil when it cannot
--   uq      with quotas, by list key, the lists the latest reservation
--           pushed onto, each with the start that push evicted ('' for
--           none); nil without quotas
--   ep      the state's epoch, in [1, 2^32): set from the clock when the
--           first reservation writes the state, so that a state made anew
--           (FLUSHALL, a restart without persistence, an eviction) is told
--           apart from the one before, and the reservations of the one
--           before cannot be given back into it; nil until then
--   s, sk   the record (keyState's sent and sentBucket): when the latest
--           request started, as a reservation that goes at once and
--           confirm.lua note it, and the record's bucket's tokens left
--           then (nil without a bucket); s is nil until a start is noted.
--           A cancel leaves them, so that they never go back in time
--
-- ARGV is the rule: rate, burst, min_delay, jitter, then each quota's
-- requests and window. To reserve, the jitter sample, the longest
-- acceptable wait in nanoseconds (0: any) and the not-before follow, each
-- left out when it is 0 and nothing follows it; to report, 'report'
-- follows. The not-before is how long from now the caller's own earlier
-- starts, which Redis did not grant (its fallback did, while Redis was
-- away), keep this start back: the queue goes on from there. A reservation
-- returns {1, wait, reason, seq, start, ep}, or {0, wait, reason} when the wait
-- is too long, in which case it changes nothing. A report returns {wait,
-- reason, paused, then each quota's remaining and next_free}. Arguments
-- that are '0' are not converted, as those that are left out are not: the
-- common case costs less.
--
-- slip, defined before this script, is how far the record may be ahead
-- of a start the plan allows at once before it holds the start back, as
-- confirm.lua's.
--
-- horizon, defined before this script, is the longest wait: a reservation
-- that would wait longer is refused whatever the longest acceptable wait,
-- and a report says horizon. Each duration in ARGV and each wait for
-- tokens is cut to twice horizon, still refused, so that every time stays
-- an exact integer well within an int64 and the keys' expiry is a number
-- PEXPIRE takes.
local nq = #KEYS - 1
local rate, burst, min_delay, jitter = tonumber(ARGV[1]), tonumber(ARGV[2]), 0, 0
if ARGV[3] ~= '0' then
  min_delay = math.min(tonumber(ARGV[3]), 2 * horizon)
end
if ARGV[4] ~= '0' then
  jitter = math.min(tonumber(ARGV[4]), 2 * horizon)
end
local requests, windows = nil, nil
if nq > 0 then
  requests, windows = {}, {}
  for i = 1, nq do
    requests[i], windows[i] = tonumber(ARGV[3 + 2 * i]), math.min(tonumber(ARGV[4 + 2 * i]), 2 * horizon)
  end
end
local report, sample, max_wait, not_before = ARGV[5 + 2 * nq] == 'report', 0, 0, 0
if ARGV[5 + 2 * nq] and not report then
  sample, max_wait = math.min(tonumber(ARGV[5 + 2 * nq]), 2 * horizon), tonumber(ARGV[6 + 2 * nq] or 0)
  if ARGV[7 + 2 * nq] then
    not_before = math.min(tonumber(ARGV[7 + 2 * nq]), 2 * horizon)
  end
end

local now = clock()
local raw = redis.call('HGET', KEYS[1], 's')
local tk, ta, l, p, qa, seq, xa, ep, s, sk = nil, nil, nil, 0, 0, 0, 0, nil, nil, nil
if raw then
  local _
  tk, ta, l, p, qa, seq, _, xa, _, _, _, _, _, ep, s, sk = cmsgpack.unpack(raw)
end

-- How many starts each quota's list holds and, for the full ones, the
-- oldest start.
local n, oldest
if nq > 0 then
  n, oldest = {}, {}
  for i = 1, nq do
    n[i] = redis.call('LLEN', KEYS[1 + i])
    if n[i] >= requests[i] then
      oldest[i] = tonumber(redis.call('LINDEX', KEYS[1 + i], 0))
    end
  end
end

-- The earliest start at or after now that every rule allows, with the
-- jitter sample added to the gap since the latest start, and the rule that
-- set it.
local t, reason = now, ''
if l then
  if l > t then
    t, reason = l, 'queue'
  end
  if min_delay > 0 and l + min_delay > t then
    t, reason = l + min_delay, 'min_delay'
  end
end
if not_before > 0 and now + not_before > t then
  t, reason = now + not_before, 'queue'
end
if p > t then
  t, reason = p, 'pause'
end
for i = 1, nq do
  if oldest[i] and oldest[i] + windows[i] > t then
    t, reason = oldest[i] + windows[i], 'quota'
  end
end
local level, level_at = burst, t -- the bucket's tokens at time level_at
if rate > 0 then
  if ta then
    level = tk + (t - ta) * rate / 1e6
    if level > burst then
      level = burst
    end
  end
  local missing = 1 - level
  if missing > 0 then
    t, reason = t + math.min(math.ceil(missing * 1e6 / rate), 2 * horizon), 'rate'
  end
end
if l and sample > 0 then
  if t > now then
    t = t + sample
  elseif l + sample > t then
    t, reason = l + sample, 'jitter'
  end
end

-- The record, as confirm.lua reads it: the earliest start it allows, u,
-- and its bucket's tokens at now. A start the plan allows at once, or a
-- report, waits for it when it asks for more than slip.
local u, rlevel = now, burst
if s and (report or t == now) then
  u, rlevel = recorded(s, sk, now, min_delay, rate, burst)
  if u > t and u - now > slip then
    t, reason = u, 'queue'
  end
end

if report then
  local out = {math.min(t - now, horizon), reason, math.max(0, p - now)}
  for i = 1, nq do
    local remaining, next_free = requests[i], 0
    for _, v in ipairs(redis.call('LRANGE', KEYS[1 + i], 0, -1)) do
      local ends = tonumber(v) + windows[i]
      if ends > now then
        if remaining == requests[i] then
          next_free = ends - now
        end
        remaining = remaining - 1
      end
    end
    out[#out + 1], out[#out + 2] = remaining, next_free
  end
  return out
end
if t - now > horizon then
  return {0, horizon, reason}
end
if max_wait > 0 and (t - now) * 1000 > max_wait then
  return {0, t - now, reason}
end

local utk, uta, ul, uqa, uq = tk, ta, l, qa, nil
if t + min_delay + jitter > qa then
  qa = t + min_delay + jitter
end
if rate > 0 then
  if ta and t ~= level_at then
    level = tk + (t - ta) * rate / 1e6
    if level > burst then
      level = burst
    end
  end
  tk, ta = level - 1, t
  local full = t + math.min(math.ceil((burst - tk) * 1e6 / rate), 2 * horizon) -- the bucket is full again
  if full > qa then
    qa = full
  end
end
local made = false -- a list was made, without an expiry yet
if nq > 0 then
  uq = {}
  for i = 1, nq do
    local key, evicted = KEYS[1 + i], ''
    -- '%.0f' writes a time exactly, never in exponent form, as list
    -- entries must be for LREM to find them.
    redis.call('RPUSH', key, string.format('%.0f', t))
    if n[i] >= requests[i] then
      evicted = redis.call('LPOP', key)
    end
    made = made or n[i] == 0
    uq[key] = evicted
    qa = math.max(qa, t + windows[i])
  end
end
if not ep then
  ep, seq = now % 4294967295 + 1, 0
end
l, seq = t, (seq + 1) % 4294967296
if t == now then
  -- Going at once: the record notes the start, as confirm.lua does.
  s, sk = now, nil
  if min_delay > 0 and now + min_delay > qa then
    qa = now + min_delay
  end
  if rate > 0 then
    sk = rlevel - 1
    qa = math.max(qa, now + math.min(math.ceil((burst - sk) * 1e6 / rate), 2 * horizon))
  end
end

-- A list just made has no expiry yet.
local ms
xa, ms = expiry(now, qa, xa, made)
redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, '', xa, utk, uta, ul, uqa, uq, ep, s, sk))
if ms then
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ms)
  end
end
return {1, t - now, reason, seq, t, ep}
