-- What every script shares: the rule in ARGV, a domain's state, and
-- schedule.go's earliest start, step for step. Times are integer
-- microseconds on the clock that clock() reads; tokens are floats.
--
-- KEYS[1] is the domain's state hash; KEYS[1+i] is the list of the latest
-- starts in quota i's window, oldest first, at most as many as the quota
-- allows. The hash has one field, s: a MessagePack stream (cmsgpack) of
-- tk, ta, l, p, qa, seq, sig, xa, undo, so that a call reads and writes
-- one small value:
--   tk, ta  the bucket's tokens at time ta; nil when the bucket is full
--   l       the latest start; nil when none
--   p       paused until
--   qa      quiet at: from then on the state is as good as a fresh one
--   seq     the latest reservation's ID
--   sig     the quotas' sizes the lists were made for ("10,100")
--   xa      when the keys expire
--   undo    while the latest reservation can be undone: the earlier tk,
--           ta, l and qa, then for each quota whether it pushed onto the
--           list and the start that push evicted (nil: none); else nil

-- fmt_time writes a time exactly, never in exponent form, as list entries
-- must be for LREM to find them.
local function fmt_time(t)
  return string.format('%.0f', t)
end

-- read_rule reads the rule that leads ARGV: rate, burst, min_delay,
-- jitter, the quotas' sizes joined by commas ("10,100"), then each quota's
-- requests and window. It returns the rule and the index of the first
-- argument after it.
local function read_rule(nq)
  local r = {
    rate = tonumber(ARGV[1]),
    burst = tonumber(ARGV[2]),
    min_delay = tonumber(ARGV[3]),
    jitter = tonumber(ARGV[4]),
    sig = ARGV[5],
    nq = nq,
  }
  if nq > 0 then
    r.requests, r.windows = {}, {}
    for i = 1, nq do
      r.requests[i] = tonumber(ARGV[4 + 2 * i])
      r.windows[i] = tonumber(ARGV[5 + 2 * i])
    end
  end
  return r, 6 + 2 * nq
end

-- decode reads field s; raw is false when the domain has no state.
local function decode(raw)
  if not raw then
    return {p = 0, qa = 0, seq = 0, sig = '', xa = 0}
  end
  local tk, ta, l, p, qa, seq, sig, xa, undo = cmsgpack.unpack(raw)
  return {tk = tk, ta = ta, l = l, p = p, qa = qa, seq = seq, sig = sig, xa = xa, undo = undo}
end

local function encode(s)
  return cmsgpack.pack(s.tk, s.ta, s.l, s.p, s.qa, s.seq, s.sig, s.xa, s.undo)
end

-- load_state reads the domain's state. fits is whether its quota lists
-- were made for r's quotas; when not, they count as empty (fitWindows).
local function load_state(r)
  local s = decode(redis.call('HGET', KEYS[1], 's'))
  s.fits = s.sig == r.sig
  return s
end

-- read_windows returns how many starts each quota's list holds and, for
-- the full ones, the oldest start; nothing without quotas.
local function read_windows(s, r)
  if r.nq == 0 then
    return nil, nil
  end
  local n, oldest = {}, {}
  for i = 1, r.nq do
    n[i] = 0
    if s.fits then
      n[i] = redis.call('LLEN', KEYS[1 + i])
      if n[i] >= r.requests[i] then
        oldest[i] = tonumber(redis.call('LINDEX', KEYS[1 + i], 0))
      end
    end
  end
  return n, oldest
end

-- tokens_at is the bucket's level at t, which must not precede s.ta.
local function tokens_at(s, t, r)
  if not s.ta then
    return r.burst
  end
  return math.min(r.burst, s.tk + (t - s.ta) * r.rate / 1e6)
end

-- earliest returns the earliest start at or after now that every rule
-- allows, with jitter added to the gap since the latest start, and the
-- rule that set it.
local function earliest(now, s, r, oldest, jitter)
  local t, reason = now, ''
  if s.l then
    if s.l > t then
      t, reason = s.l, 'queue'
    end
    if r.min_delay > 0 and s.l + r.min_delay > t then
      t, reason = s.l + r.min_delay, 'min_delay'
    end
  end
  if s.p > t then
    t, reason = s.p, 'pause'
  end
  for i = 1, r.nq do
    if oldest[i] and oldest[i] + r.windows[i] > t then
      t, reason = oldest[i] + r.windows[i], 'quota'
    end
  end
  if r.rate > 0 then
    local missing = 1 - tokens_at(s, t, r)
    if missing > 0 then
      t, reason = t + math.ceil(missing * 1e6 / r.rate), 'rate'
    end
  end
  if s.l and jitter > 0 then
    if t > now then
      t = t + jitter
    elseif s.l + jitter > t then
      t, reason = s.l + jitter, 'jitter'
    end
  end
  return t, reason
end

-- expiry returns in how many milliseconds the domain's keys should
-- expire, or nil when their expiry stands, and notes it in s before s is
-- encoded. The keys go at qa plus the time from now to qa, at least a
-- second, set whenever qa passes the expiry set before, or when force (a
-- key was just made). So a busy domain seldom pays for PEXPIRE, and an
-- idle one is gone soon after it has fully recovered.
local function expiry(now, s, force)
  if s.qa <= s.xa and not force then
    return nil
  end
  local ttl = math.max(s.qa - now, 0) + math.max(s.qa - now, 1e6)
  s.xa = now + ttl
  return math.ceil(ttl / 1000)
end

-- expire applies what expiry returned, once the keys exist.
local function expire(ms)
  if ms then
    for i = 1, #KEYS do
      redis.call('PEXPIRE', KEYS[i], ms)
    end
  end
end
