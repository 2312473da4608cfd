-- confirm says that the wait of the reservation of epoch ARGV[x] that
-- starts at ARGV[x+1] is over and its request starts now, after the rule as
-- reserve.lua reads it: keyState.confirm. It returns {paused, wait}:
--   - {p, 0} while the domain is paused, p the pause left: the caller
--     gives the turn back and claims the first one after the pause;
--   - {0, w} when the record (the latest request's start, sent, and the
--     tokens sent_tokens left then) does not allow a start now but in w:
--     an earlier request started later than planned, after this turn was
--     granted;
--   - {0, 0} otherwise, and the start is recorded. A start later than
--     planned by more than slip moves the plan as keyState.slip does: the
--     quota slots to now, and, unless a later turn is planned at or after
--     now, the latest start and the bucket's time to now (its token counts
--     as taken then), so the turns claimed after it follow from now.
-- A domain gone, or of another epoch, has nothing to keep apart from:
-- {0, 0}, recording nothing. Waits the record asks for of up to slip are
-- not made (so that a start that is late by the usual round trip does not
-- cost another); the record keeps the debt, so it does not add up.
local quota_count = #KEYS - 1
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local min_delay, jitter = math.min(tonumber(ARGV[3]), 2 * horizon), math.min(tonumber(ARGV[4]), 2 * horizon)
local reserved_epoch, planned = tonumber(ARGV[5 + 2 * quota_count]), tonumber(ARGV[6 + 2 * quota_count])

local now = clock()
local found, tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
  undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens = load_state(KEYS[1])
if not found or epoch ~= reserved_epoch then
  return {0, 0}
end
if paused_until > now then
  return {paused_until - now, 0}
end

-- The record: the earliest start it allows, and its bucket's tokens at
-- now.
local allowed, level = recorded(sent, sent_tokens, now, min_delay, rate, burst)
if allowed - now > slip then
  return {0, allowed - now}
end

local ttl
if now - planned > slip then
  if quota_count > 0 then
    local was, is = string.format('%.0f', planned), string.format('%.0f', now)
    for i = 1, quota_count do
      local key = KEYS[1 + i]
      if redis.call('LREM', key, -1, was) > 0 then
        local before
        for _, v in ipairs(redis.call('LRANGE', key, 0, -1)) do
          if tonumber(v) > now then
            before = v
            break
          end
        end
        if before then
          redis.call('LINSERT', key, 'BEFORE', before, is)
        else
          redis.call('RPUSH', key, is)
        end
        quiet_at = math.max(quiet_at, now + math.min(tonumber(ARGV[4 + 2 * i]), 2 * horizon))
      end
    end
  end
  if not latest or latest < now then
    latest = now
    quiet_at = math.max(quiet_at, now + min_delay + jitter)
    if rate > 0 and tokens_at and tokens_at < now then
      tokens_at = now
      quiet_at = math.max(quiet_at, now + token_time(burst - tokens, rate))
    end
  end
end
sent, sent_tokens = now, nil
quiet_at = math.max(quiet_at, now + min_delay)
if rate > 0 then
  sent_tokens = level - 1
  quiet_at = math.max(quiet_at, now + token_time(burst - sent_tokens, rate))
end

expires_at, ttl = expiry(now, quiet_at, expires_at, false)
save_state(KEYS[1], tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
  undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens)
if ttl then
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return {0, 0}
