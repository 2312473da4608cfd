-- A domain's state is one field, v, of its hash: these values, in this
-- order, packed by struct (little-endian; d a double, I4 an unsigned
-- 32-bit integer), so that a call reads and writes one small value, which
-- one C call packs:
--   tokens, tokens_at   d d  the plan's bucket: its tokens at time
--                            tokens_at; nil when the bucket is full
--   latest              d    the latest start planned; nil when none
--   paused_until        d    no start before it
--   quiet_at            d    from then on the state is as good as a fresh
--                            one
--   serial              I4   the latest turn's number, below 2^32
--   expires_at          d    when the keys expire
--   epoch               I4   in [1, 2^32): set from the clock when the
--                            first reservation writes the state, so that a
--                            state made anew (FLUSHALL, a restart without
--                            persistence, an eviction) is told apart from
--                            the one before, and the turns of the one
--                            before cannot be given back into it; nil
--                            (written 0) until then
--   sent, sent_tokens   d d  when the latest request really started, and
--                            the tokens its bucket held just after (nil:
--                            full); sent is nil until a start is noted
--   made                d    counts the starts made
--   window, window_until
--                       d d  the longest window the history keeps (see
--                            history_window), and until when
-- then the turns, the latest handed out, oldest first, each with what
-- giving it back restores (see keep): its fields SERIAL (I4), AT, TOKENS,
-- TOKENS_AT, LATEST (d), STARTED and CANCELLED (one byte: 1 if started,
-- plus 2 if given back), SENT, SENT_TOKENS, MADE (d). A nil double is
-- written as NaN. Times are integer microseconds on the clock that clock()
-- reads, exact in a double; tokens are floats. The history, a list, holds
-- the starts, planned or made, that the longest window still holds,
-- oldest first. (Earlier versions kept other encodings in fields s and p,
-- which these scripts do not read: a state made anew deletes them.)
local STATE_FORMAT, TURN_FORMAT, TURN_BYTES = 'dddddI4dI4ddddd', 'I4ddddBddd', 61

-- A turn is an array, so that the state packs it small; these are the
-- indices of its fields: its number; its start; the plan's bucket and
-- latest start before it, which giving it back restores; whether its
-- request started, and then the latest start made and its bucket before
-- it, and how many starts were made with it; whether it was given back.
local SERIAL, AT, TOKENS, TOKENS_AT, LATEST, STARTED, SENT, SENT_TOKENS, MADE, CANCELLED = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10

-- NAN stands for nil in the state's encoding.
local NAN = 0 / 0

-- TURN_UNPACK is the struct format of one turn, for decode_turn.
local TURN_UNPACK = '<' .. TURN_FORMAT

-- formats holds the struct format of a state by its number of turns.
local formats = {}

-- state_format returns the struct format of a state of n turns.
local function state_format(n)
  local f = formats[n]
  if not f then
    f = '<' .. STATE_FORMAT .. string.rep(TURN_FORMAT, n)
    formats[n] = f
  end
  return f
end

-- NO_TURN_FORMAT and ONE_TURN_FORMAT are the formats of a state of no
-- turn and of one, the common ones, which encode packs without a lookup.
-- (A library's code runs when it loads without the string library, so
-- these are written out.)
local NO_TURN_FORMAT, ONE_TURN_FORMAT = '<' .. STATE_FORMAT, '<' .. STATE_FORMAT .. TURN_FORMAT

-- flags returns turn's STARTED and CANCELLED as the state writes them.
local function flags(turn)
  return (turn[STARTED] and 1 or 0) + (turn[CANCELLED] and 2 or 0)
end

-- encode returns s written as load_state reads it. A state of one turn,
-- the common one, or none, packs in one call, without a table.
local function encode(s)
  local turns = s.turns
  local t = turns[1]
  if turns[2] then
    local v = {}
    for _, t in ipairs(turns) do
      local n = #v
      v[n + 1], v[n + 2], v[n + 3], v[n + 4], v[n + 5] = t[SERIAL], t[AT], t[TOKENS] or NAN, t[TOKENS_AT] or NAN, t[LATEST] or NAN
      v[n + 6], v[n + 7], v[n + 8], v[n + 9] = flags(t), t[SENT] or NAN, t[SENT_TOKENS] or NAN, t[MADE] or NAN
    end
    return struct.pack(state_format(#turns), s.tokens or NAN, s.tokens_at or NAN, s.latest or NAN, s.paused_until, s.quiet_at, s.serial,
      s.expires_at, s.epoch or 0, s.sent or NAN, s.sent_tokens or NAN, s.made, s.window, s.window_until, unpack(v))
  end
  if not t then
    return struct.pack(NO_TURN_FORMAT, s.tokens or NAN, s.tokens_at or NAN, s.latest or NAN, s.paused_until, s.quiet_at, s.serial,
      s.expires_at, s.epoch or 0, s.sent or NAN, s.sent_tokens or NAN, s.made, s.window, s.window_until)
  end
  return struct.pack(ONE_TURN_FORMAT, s.tokens or NAN, s.tokens_at or NAN, s.latest or NAN, s.paused_until, s.quiet_at, s.serial,
    s.expires_at, s.epoch or 0, s.sent or NAN, s.sent_tokens or NAN, s.made, s.window, s.window_until,
    t[SERIAL], t[AT], t[TOKENS] or NAN, t[TOKENS_AT] or NAN, t[LATEST] or NAN, (t[STARTED] and 1 or 0) + (t[CANCELLED] and 2 or 0),
    t[SENT] or NAN, t[SENT_TOKENS] or NAN, t[MADE] or NAN)
end

-- The expression x == x and x or nil below is nil for NaN, x otherwise.

-- decode_turn returns the turn that raw holds at pos, encode's, and the
-- position after it.
local function decode_turn(raw, pos)
  local serial, at, tokens, tokens_at, latest, flag, sent, sent_tokens, made, after = struct.unpack(TURN_UNPACK, raw, pos)
  return {serial, at, tokens == tokens and tokens or nil, tokens_at == tokens_at and tokens_at or nil, latest == latest and latest or nil,
    flag % 2 == 1 or nil, sent == sent and sent or nil, sent_tokens == sent_tokens and sent_tokens or nil, made == made and made or nil,
    flag >= 2 or nil}, after
end

-- decode returns the state that raw, encode's, holds for keys.
local function decode(keys, raw)
  local tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, epoch, sent, sent_tokens, made, window, window_until, pos =
    struct.unpack(NO_TURN_FORMAT, raw)
  local turns = {}
  for j = 1, (#raw - pos + 1) / TURN_BYTES do
    turns[j], pos = decode_turn(raw, pos)
  end
  return {key = keys[1], history = keys[2], record = keys[3], tokens = tokens == tokens and tokens or nil,
    tokens_at = tokens_at == tokens_at and tokens_at or nil, latest = latest == latest and latest or nil, paused_until = paused_until,
    quiet_at = quiet_at, serial = serial, expires_at = expires_at, epoch = epoch ~= 0 and epoch or nil, sent = sent == sent and sent or nil,
    sent_tokens = sent_tokens == sent_tokens and sent_tokens or nil, made = made, window = window, window_until = window_until, turns = turns}
end

-- A function of the library keeps its locals from call to call: the state
-- cache holds the states it saved last as tables, each with the value it
-- wrote (raw), so that a call that reads the same value takes the table
-- instead of decoding it. A table leaves the cache when a call takes it,
-- and comes back when that call saves it, so that a call that changes it
-- without saving it (a report, a refusal) leaves nothing behind. The
-- cache keeps the states saved since it last turned over, and those of
-- the turn before, up to max_cached each: the busy domains. Scripts run
-- by hash start with it empty.
local cached, cached_before, cached_count, max_cached = {}, {}, 0, 1000

-- cache keeps s, just saved as raw.
local function cache(s, raw)
  if cached_count >= max_cached then
    cached, cached_before, cached_count = {}, cached, 0
  end
  if cached[s.key] == nil then
    cached_count = cached_count + 1
  end
  s.raw, cached[s.key] = raw, s
end

-- uncache takes the state of key out of the cache and returns it if the
-- cache holds it as raw; nil otherwise.
local function uncache(key, raw)
  local s = cached[key]
  if s then
    cached[key], cached_count = nil, cached_count - 1
  else
    s = cached_before[key]
    cached_before[key] = nil
  end
  if s and s.raw == raw then
    return s
  end
end

-- load_state returns the state of the domain whose keys are keys (its
-- state hash, then the history of its starts and the record of its latest
-- start, both nil for a probe) as a table, and whether there is one. A
-- domain without one is as a fresh one: not paused, quiet, numbered 0,
-- without an expiry. The table holds the keys too, as key, history and
-- record.
--
-- The record is a key apart, so that Redis losing one of the two keys
-- (evicted under allkeys-lru, deleted) does not lose the latest start: a
-- domain whose state is lost counts the start its record holds (see
-- recorded_start). It holds the latest start made, and expires with the
-- other keys.
local function load_state(keys)
  local raw = redis.call('HGET', keys[1], 'v')
  if not raw then
    return {key = keys[1], history = keys[2], record = keys[3], paused_until = 0, quiet_at = 0, serial = 0, expires_at = 0, made = 0,
      turns = {}, window = 0, window_until = 0, fresh = true}, false
  end
  local s = uncache(keys[1], raw)
  if not s then
    return decode(keys, raw), true
  end
  s.history, s.record, s.noted, s.list_made = keys[2], keys[3], nil, nil
  return s, true
end

-- recorded_start returns the latest start made that the record of s's
-- domain holds, or nil. The record is a hash whose field at holds it
-- (MessagePack), so that writing it keeps the key's expiry.
local function recorded_start(s)
  local v = s.record and redis.call('HGET', s.record, 'at')
  return v and cmsgpack.unpack(v) or nil
end

-- record_start writes s.sent to the record of s's domain, and reports
-- whether it made the record, which then has no expiry.
local function record_start(s)
  return redis.call('HSET', s.record, 'at', cmsgpack.pack(s.sent)) == 1
end

-- write_state writes raw, s encoded, to s's hash, and caches s.
local function write_state(s, raw)
  redis.call('HSET', s.key, 'v', raw)
  cache(s, raw)
end

-- save_state writes s to its hash, and caches it. A state made anew
-- deletes the fields that earlier versions wrote.
local function save_state(s)
  write_state(s, encode(s))
  if s.fresh then
    s.fresh = nil
    redis.call('HDEL', s.key, 's', 'p')
  end
end

-- parse_rule returns the rule that text, the first of a script's
-- arguments, writes as numbers apart by spaces: rate, burst, min_delay,
-- jitter, then each quota's requests and window. Each duration is cut to
-- twice horizon, so that every time stays an exact integer well within an
-- int64. Its field recorded says whether a start, counted alone into a
-- fresh state (recorded_start), holds the next one back: only then is the
-- record of the latest start worth writing.
local function parse_rule(text)
  local v = {}
  for field in string.gmatch(text, '%S+') do
    v[#v + 1] = tonumber(field)
  end
  local rule = {rate = v[1], burst = v[2], min_delay = math.min(v[3], 2 * horizon), jitter = math.min(v[4], 2 * horizon), quotas = {},
    longest = 0}
  rule.recorded = rule.min_delay > 0 or rule.jitter > 0 or rule.rate > 0 and rule.burst < 2
  for i = 1, (#v - 4) / 2 do
    local q = {requests = v[3 + 2 * i], window = math.min(v[4 + 2 * i], 2 * horizon)}
    rule.quotas[i], rule.longest = q, math.max(rule.longest, q.window)
  end
  return rule
end

-- rules holds the rules read so far, by their text, so that a function
-- of the library, whose locals last from call to call, parses a rule
-- once; scripts run by hash start with it empty. It forgets them all past
-- max_rules. The scripts never change a rule.
local rules, rules_held, max_rules = {}, 0, 1000

-- read_rule returns the rule that the first of argv, a script's
-- arguments, writes (parse_rule), and the index in argv of the argument
-- after it.
local function read_rule(argv)
  local rule = rules[argv[1]]
  if not rule then
    rule = parse_rule(argv[1])
    if rules_held >= max_rules then
      rules, rules_held = {}, 0
    end
    rules[argv[1]], rules_held = rule, rules_held + 1
  end
  return rule, 2
end

-- token_time returns how long a bucket filling at rate per second takes
-- to gain tokens, in microseconds rounded up, cut to twice horizon.
local function token_time(tokens, rate)
  local us = math.ceil(tokens * 1e6 / rate)
  if us > 2 * horizon then
    return 2 * horizon
  end
  return us
end

-- level returns the tokens at t, not before at, of a bucket that held
-- tokens at time at, or that is full if at is nil. From the microsecond
-- it counts as full on, it is exactly full, not a rounding error short.
-- (This and the functions every call runs compare numbers in place of
-- math.max and math.min, which cost a lookup and a call each.)
local function level(tokens, at, t, rule)
  if not at then
    return rule.burst
  end
  local elapsed = t - at
  if elapsed < 0 then
    elapsed = 0
  end
  local l = tokens + elapsed * rule.rate / 1e6
  if l >= rule.burst or rule.burst - l < 1e-6 and t - at >= token_time(rule.burst - tokens, rule.rate) then
    return rule.burst
  end
  return l
end

-- ready returns the earliest time at or after t when that bucket holds a
-- token.
local function ready(tokens, at, t, rule)
  local missing = 1 - level(tokens, at, t, rule)
  if missing > 1e-9 then
    return t + token_time(missing, rule.rate)
  end
  return t
end
