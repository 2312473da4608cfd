-- A domain's state is one field, s, of its hash: a MessagePack stream
-- (cmsgpack) of these values, in this order, so that a call reads and
-- writes one small value:
--   tokens, tokens_at   the bucket's tokens at time tokens_at; nil when
--                       the bucket is full
--   latest              the latest start granted; nil when none
--   paused_until        no start before it
--   quiet_at            from then on the state is as good as a fresh one
--   serial              the latest reservation's number, below 2^32
--   (unused)            '' (older scripts kept the quotas' sizes here)
--   expires_at          when the keys expire
--   undo_tokens, undo_tokens_at, undo_latest, undo_quiet_at
--                       while the latest reservation can be undone, the
--                       tokens, tokens_at, latest and quiet_at before it;
--                       undo_quiet_at is nil when it cannot
--   undo_lists          with quotas, by list key, the lists the latest
--                       reservation pushed onto, each with the start that
--                       push evicted ('' for none); nil without quotas
--   epoch               in [1, 2^32): set from the clock when the first
--                       reservation writes the state, so that a state made
--                       anew (FLUSHALL, a restart without persistence, an
--                       eviction) is told apart from the one before, and
--                       the reservations of the one before cannot be given
--                       back into it; nil until then
--   sent, sent_tokens   the record (keyState's sent and sentBucket): when
--                       the latest request started, as a reservation that
--                       goes at once and confirm.lua note it, and the
--                       record's bucket's tokens left then (nil without a
--                       bucket); sent is nil until a start is noted. A
--                       cancel leaves them, so that they never go back in
--                       time.
-- Times are integer microseconds on the clock that clock() reads; tokens
-- are floats.

-- load_state returns the state in the hash key, in the order above but
-- for the unused value, and whether there is one. A domain without one
-- is as a fresh one: not paused, quiet, numbered 0, without an expiry.
local function load_state(key)
  local raw = redis.call('HGET', key, 's')
  if not raw then
    return false, nil, nil, nil, 0, 0, 0, 0, nil, nil, nil, nil, nil, nil, nil, nil
  end
  local tokens, tokens_at, latest, paused_until, quiet_at, serial, _, expires_at, undo_tokens, undo_tokens_at,
    undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens = cmsgpack.unpack(raw)
  return true, tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
    undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens
end

-- save_state writes the state, in load_state's order, to the hash key.
local function save_state(key, tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens,
    undo_tokens_at, undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens)
  redis.call('HSET', key, 's', cmsgpack.pack(tokens, tokens_at, latest, paused_until, quiet_at, serial, '', expires_at,
    undo_tokens, undo_tokens_at, undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens))
end

-- token_time returns how long a bucket filling at rate per second takes
-- to gain tokens, in microseconds rounded up, cut to twice horizon.
local function token_time(tokens, rate)
  return math.min(math.ceil(tokens * 1e6 / rate), 2 * horizon)
end

-- tokens_then returns the tokens of a bucket that held tokens at time
-- since, at the later time t.
local function tokens_then(tokens, since, t, rate, burst)
  return math.min(tokens + (t - since) * rate / 1e6, burst)
end
