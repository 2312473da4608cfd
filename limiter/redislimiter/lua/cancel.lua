-- cancel gives back the reservation of epoch ARGV[x], number ARGV[x+1],
-- that starts at ARGV[x+2], after the rule as reserve.lua reads it. The
-- latest reservation is undone exactly. An older one frees its quota slots
-- and nothing else: its token stays spent and the min delay after it
-- stands, as if its request had been sent. Its token cannot come back at
-- the time of the latest start, where the bucket has been counted since:
-- when the turns after it were queued, it would have refilled a full
-- bucket, letting the next request share the latest's start; and without
-- the starts in between, which only quotas keep, there is no telling when
-- it would not. So a freed turn is never reused sooner than the rules
-- allow; the cost is that later requests wait up to a token longer for
-- each older turn given back. It returns 1 for an undo, 2 for a give-back,
-- 0 when the domain is gone or its state is not the one the reservation was
-- made in (another epoch). The record (sent, sent_tokens) stays, unlike
-- keyState's, which the undo restores: a start it holds may have been
-- made, and keeping one that was not only holds the next starts back. The
-- state is as the prelude describes it.
local quota_count = #KEYS - 1
local reserved_epoch, reserved_serial = tonumber(ARGV[5 + 2 * quota_count]), tonumber(ARGV[6 + 2 * quota_count])
local reserved_start = ARGV[7 + 2 * quota_count]
local found, tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
  undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens = load_state(KEYS[1])
if not found or epoch ~= reserved_epoch then
  return 0
end

-- Both ways the domain is quiet no later than before, so the keys' expiry
-- stands.
if serial == reserved_serial and undo_quiet_at then
  tokens, tokens_at, latest, quiet_at = undo_tokens, undo_tokens_at, undo_latest, math.max(undo_quiet_at, paused_until)
  if sent then
    -- The record stays: the start it holds may have been made.
    local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
    quiet_at = math.max(quiet_at, sent + math.min(tonumber(ARGV[3]), 2 * horizon))
    if rate > 0 and sent_tokens then
      quiet_at = math.max(quiet_at, sent + token_time(burst - sent_tokens, rate))
    end
  end
  for i = 1, quota_count do
    local key = KEYS[1 + i]
    local evicted = undo_lists and undo_lists[key]
    if evicted then
      redis.call('RPOP', key)
      if evicted ~= '' then
        redis.call('LPUSH', key, evicted)
      end
    end
  end
  save_state(KEYS[1], tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, nil, nil, nil, nil, nil,
    epoch, sent, sent_tokens)
  return 1
end

-- A list this removes a start from can no longer be undone by popping its
-- tail.
for i = 1, quota_count do
  local key = KEYS[1 + i]
  if redis.call('LREM', key, -1, reserved_start) > 0 and undo_lists then
    undo_lists[key] = nil
  end
end
save_state(KEYS[1], tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
  undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens)
return 2
