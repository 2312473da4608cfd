-- pause makes nothing start before ARGV[1] microseconds from now, cut to
-- twice horizon; a shorter pause never shortens a longer one. KEYS[1] is
-- the state hash (state.lua); the keys' expiry is set as reserve.lua sets
-- it.
local now = clock()
local s = load_state(KEYS)
local till = now + math.min(tonumber(ARGV[1]), 2 * horizon)
s.paused_until, s.quiet_at = math.max(s.paused_until, till), math.max(s.quiet_at, till)
local ttl
s.expires_at, ttl = expiry(now, s.quiet_at, s.expires_at, false)
save_state(s)
if ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
