-- pause makes nothing start before ARGV[1] microseconds from now; a
-- shorter pause never shortens a longer one. KEYS[1] is the state hash.
local now = clock()
local s = decode(redis.call('HGET', KEYS[1], 's'))
local till = now + tonumber(ARGV[1])
s.p = math.max(s.p, till)
s.qa = math.max(s.qa, till)
local ms = expiry(now, s, false)
redis.call('HSET', KEYS[1], 's', encode(s))
expire(ms)
return 1
