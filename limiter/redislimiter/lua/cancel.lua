-- cancel gives back the reservation of epoch ARGV[x], number ARGV[x+1],
-- that starts at ARGV[x+2], after the rule as reserve.lua reads it, as
-- keyState.cancel does: the latest reservation is undone exactly; an older
-- one returns its token and its quota slots. It returns 1 for an undo, 2
-- for a give-back, 0 when the domain is gone or its state is not the one
-- the reservation was made in (another epoch). The state is as reserve.lua
-- describes it.
local nq = #KEYS - 1
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local sig = ''
for i = 1, nq do
  if i > 1 then
    sig = sig .. ','
  end
  sig = sig .. ARGV[3 + 2 * i]
end
local epoch, id = tonumber(ARGV[5 + 2 * nq]), tonumber(ARGV[6 + 2 * nq])
local start = ARGV[7 + 2 * nq]
local raw = redis.call('HGET', KEYS[1], 's')
if not raw then
  return 0
end
local tk, ta, l, p, qa, seq, had_sig, xa, utk, uta, ul, uqa, uq, ep = cmsgpack.unpack(raw)
if ep ~= epoch then
  return 0
end
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
  redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, had_sig, xa, nil, nil, nil, nil, nil, ep))
  return 1
end

if rate > 0 and ta then
  tk = math.min(burst, tk + 1)
end
if fits then
  for i = 1, nq do
    if redis.call('LREM', KEYS[1 + i], -1, start) > 0 and uqa then
      uq[2 * i - 1] = false
    end
  end
end
redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, had_sig, xa, utk, uta, ul, uqa, uq, ep))
return 2
