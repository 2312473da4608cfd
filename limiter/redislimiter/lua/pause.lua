-- pause makes nothing start before ARGV[1] microseconds from now, cut to
-- twice horizon as reserve.lua cuts durations; a shorter pause never
-- shortens a longer one. KEYS[1] is the
-- state hash, as reserve.lua describes it, which sets the keys' expiry the
-- same way.
local now = clock()
local raw = redis.call('HGET', KEYS[1], 's')
local tk, ta, l, p, qa, seq, sig, xa, utk, uta, ul, uqa, uq, ep, s, sk = nil, nil, nil, 0, 0, 0, '', 0
if raw then
  tk, ta, l, p, qa, seq, sig, xa, utk, uta, ul, uqa, uq, ep, s, sk = cmsgpack.unpack(raw)
end
local till = now + math.min(tonumber(ARGV[1]), 2 * horizon)
p, qa = math.max(p, till), math.max(qa, till)
local ms
xa, ms = expiry(now, qa, xa, false)
redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, sig, xa, utk, uta, ul, uqa, uq, ep, s, sk))
if ms then
  redis.call('PEXPIRE', KEYS[1], ms)
end
return 1
