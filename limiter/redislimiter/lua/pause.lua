-- pause makes nothing start before ARGV[1] microseconds from now, cut to
-- twice horizon as reserve.lua cuts durations; a shorter pause never
-- shortens a longer one. KEYS[1] is the state hash, as the prelude
-- describes it; the keys' expiry is set as reserve.lua sets it.
local now = clock()
local _, tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
  undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens = load_state(KEYS[1])
local till = now + math.min(tonumber(ARGV[1]), 2 * horizon)
paused_until, quiet_at = math.max(paused_until, till), math.max(quiet_at, till)
local ttl
expires_at, ttl = expiry(now, quiet_at, expires_at, false)
save_state(KEYS[1], tokens, tokens_at, latest, paused_until, quiet_at, serial, expires_at, undo_tokens, undo_tokens_at,
  undo_latest, undo_quiet_at, undo_lists, epoch, sent, sent_tokens)
if ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
