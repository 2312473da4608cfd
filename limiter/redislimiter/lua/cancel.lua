-- cancel gives back the reservation with ID ARGV[x] that starts at
-- ARGV[x+1], after the rule as reserve.lua reads it, as keyState.cancel
-- does: the latest reservation is undone exactly; an older one returns its
-- quota slots but no token, since the turns after it were planned around
-- it. It returns 1 for an undo, 2 for a give-back, 0 when the domain is
-- gone. The state is as reserve.lua describes it.
local nq = #KEYS - 1
local sig = ''
for i = 1, nq do
  if i > 1 then
    sig = sig .. ','
  end
  sig = sig .. ARGV[3 + 2 * i]
end
local id = tonumber(ARGV[5 + 2 * nq])
local start = ARGV[6 + 2 * nq]
local raw = redis.call('HGET', KEYS[1], 's')
if not raw then
  return 0
end
local tk, ta, l, p, qa, seq, had_sig, xa, utk, uta, ul, uqa, uq = cmsgpack.unpack(raw)
local fits = nq > 0 and had_sig == sig

-- Both ways the domain is quiet no later than before, so the keys' expiry
-- stands.
if seq == id and uqa then
  tk, ta, l, qa = utk, uta, ul, math.max(uqa, p)
  if fits then
    for i = 1, nq do
      if uq[2 * i - 1] then
        redis.call('RPOP', KEYS[1 + i])
        if uq[2 * i] then
          redis.call('LPUSH', KEYS[1 + i], uq[2 * i])
        end
      end
    end
  end
  redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, had_sig, xa))
  return 1
end

if fits then
  for i = 1, nq do
    if redis.call('LREM', KEYS[1 + i], -1, start) > 0 and uqa then
      uq[2 * i - 1] = false
    end
  end
end
redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, had_sig, xa, utk, uta, ul, uqa, uq))
return 2
