-- reserve claims the earliest start every rule of a domain allows, as
-- Memory.ReserveAt and keyState.commit do; told to report, it claims
-- nothing and reports the domain, as keyState.state does. So the one
-- schedule.go decision (keyState.earliest) is written once, here.
--
-- It runs once per request, so it builds no tables but its reply and
-- calls few functions: in Redis's Lua a table or a call costs more than
-- the arithmetic of a reservation (with tables for the rule and the
-- state, the same work took 60% longer).
--
-- KEYS[1] is the domain's state hash, as the prelude describes it;
-- KEYS[1+i] is the list of the latest starts in quota i's window, oldest
-- first, at most as many as the quota allows. A list's key names its
-- quota (requests and window), so workers whose quota lists differ share
-- the lists of the quotas they share, and each enforces every quota it
-- knows.
--
-- ARGV is the rule: rate, burst, min_delay, jitter, then each quota's
-- requests and window. To reserve, the jitter sample, the longest
-- acceptable wait in nanoseconds (0: any) and the not-before follow, each
-- left out when it is 0 and nothing follows it; to report, 'report'
-- follows. The not-before is how long from now the caller's own earlier
-- starts, which Redis did not grant (its fallback did, while Redis was
-- away), keep this start back: the queue goes on from there. A
-- reservation returns {1, wait, reason, serial, start, epoch}, or {0,
-- wait, reason} when the wait is too long, in which case it changes
-- nothing. A report returns {wait, reason, paused, then each quota's
-- remaining and next_free}. Arguments that are '0' are not converted, as
-- those that are left out are not: the common case costs less.
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
local quota_count = #KEYS - 1
local rate, burst, min_delay, jitter = tonumber(ARGV[1]), tonumber(ARGV[2]), 0, 0
if ARGV[3] ~= '0' then
  min_delay = math.min(tonumber(ARGV[3]), 2 * horizon)
end
if ARGV[4] ~= '0' then
  jitter = math.min(tonumber(ARGV[4]), 2 * horizon)
end
local requests, windows = nil, nil
if quota_count > 0 then
  requests, windows = {}, {}
  for i = 1, quota_count do
    requests[i], windows[i] = tonumber(ARGV[3 + 2 * i]), math.min(tonumber(ARGV[4 + 2 * i]), 2 * horizon)
  end
end
local report, sample, max_wait, not_before = ARGV[5 + 2 * quota_count] == 'report', 0, 0, 0
if ARGV[5 + 2 * quota_count] and not report then
  sample, max_wait = math.min(tonumber(ARGV[5 + 2 * quota_count]), 2 * horizon), tonumber(ARGV[6 + 2 * quota_count] or 0)
  if ARGV[7 + 2 * quota_count] then
    not_before = math.min(tonumber(ARGV[7 + 2 * quota_count]), 2 * horizon)
  end
end

local now = clock()
local _, tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, _, _, _, _, _, epoch, sent, sent_tokens =
  load_state(KEYS[1])

-- How many starts each quota's list holds and, for the full ones, the
-- oldest start.
local held, oldest
if quota_count > 0 then
  held, oldest = {}, {}
  for i = 1, quota_count do
    held[i] = redis.call('LLEN', KEYS[1 + i])
    if held[i] >= requests[i] then
      oldest[i] = tonumber(redis.call('LINDEX', KEYS[1 + i], 0))
    end
  end
end

-- The earliest start at or after now that every rule allows, with the
-- jitter sample added to the gap since the latest start, and the rule that
-- set it.
local start, reason = now, ''
if latest then
  if latest > start then
    start, reason = latest, 'queue'
  end
  if min_delay > 0 and latest + min_delay > start then
    start, reason = latest + min_delay, 'min_delay'
  end
end
if not_before > 0 and now + not_before > start then
  start, reason = now + not_before, 'queue'
end
if paused_until > start then
  start, reason = paused_until, 'pause'
end
for i = 1, quota_count do
  if oldest[i] and oldest[i] + windows[i] > start then
    start, reason = oldest[i] + windows[i], 'quota'
  end
end
local level, level_at = burst, start -- the bucket's tokens at time level_at
if rate > 0 then
  if tokens_at then
    level = tokens_then(tokens, tokens_at, start, rate, burst)
  end
  if level < 1 then
    start, reason = start + token_time(1 - level, rate), 'rate'
  end
end
if latest and sample > 0 then
  if start > now then
    start = start + sample
  elseif latest + sample > start then
    start, reason = latest + sample, 'jitter'
  end
end

-- The record, as confirm.lua reads it: the earliest start it allows and
-- its bucket's tokens at now. A start the plan allows at once, or a
-- report, waits for it when it asks for more than slip.
local record_level = burst
if sent and (report or start == now) then
  local allowed
  allowed, record_level = recorded(sent, sent_tokens, now, min_delay, rate, burst)
  if allowed > start and allowed - now > slip then
    start, reason = allowed, 'queue'
  end
end

if report then
  local out = {math.min(start - now, horizon), reason, math.max(0, paused_until - now)}
  for i = 1, quota_count do
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
if start - now > horizon then
  return {0, horizon, reason}
end
if max_wait > 0 and (start - now) * 1000 > max_wait then
  return {0, start - now, reason}
end

local undo_tokens, undo_tokens_at, undo_latest, undo_quiet_at, undo_lists = tokens, tokens_at, latest, quiet_at, nil
quiet_at = math.max(quiet_at, start + min_delay + jitter)
if rate > 0 then
  if tokens_at and start ~= level_at then
    level = tokens_then(tokens, tokens_at, start, rate, burst)
  end
  tokens, tokens_at = level - 1, start
  quiet_at = math.max(quiet_at, start + token_time(burst - tokens, rate)) -- the bucket is full again
end
local made = false -- a list was made, without an expiry yet
if quota_count > 0 then
  undo_lists = {}
  for i = 1, quota_count do
    local key, evicted = KEYS[1 + i], ''
    -- '%.0f' writes a time exactly, never in exponent form, as list
    -- entries must be for LREM to find them.
    redis.call('RPUSH', key, string.format('%.0f', start))
    if held[i] >= requests[i] then
      evicted = redis.call('LPOP', key)
    end
    made = made or held[i] == 0
    undo_lists[key] = evicted
    quiet_at = math.max(quiet_at, start + windows[i])
  end
end
if not epoch then
  epoch, serial = now % 4294967295 + 1, 0
end
latest, serial = start, (serial + 1) % 4294967296
if start == now then
  -- Going at once: the record notes the start, as confirm.lua does.
  sent, sent_tokens = now, nil
  quiet_at = math.max(quiet_at, now + min_delay)
  if rate > 0 then
    sent_tokens = record_level - 1
    quiet_at = math.max(quiet_at, now + token_time(burst - sent_tokens, rate))
  end
end

-- A list just made has no expiry yet.
local ttl
expires_at, ttl = expiry(now, quiet_at, expires_at, made)
save_state(KEYS[1], tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
  undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens)
if ttl then
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return {1, start - now, reason, serial, start, epoch}
