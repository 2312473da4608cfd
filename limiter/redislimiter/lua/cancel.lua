-- cancel gives back the reservation with ID ARGV[x] that starts at
-- ARGV[x+1], as keyState.cancel does: the latest reservation is undone
-- exactly; an older one returns its token and its quota slots. It returns
-- 1 for an undo, 2 for a give-back, 0 when the domain is gone.
local nq = #KEYS - 1
local r, x = read_rule(nq)
local id = tonumber(ARGV[x])
local start = ARGV[x + 1]
local raw = redis.call('HGET', KEYS[1], 's')
if not raw then
  return 0
end
local s = decode(raw)
local fits = nq > 0 and s.sig == r.sig
local undo = s.undo

-- Both ways the domain is quiet no later than before, so the keys' expiry
-- stands.
if s.seq == id and undo then
  s.tk, s.ta, s.l = undo[1], undo[2], undo[3]
  s.qa = math.max(undo[4], s.p)
  s.undo = nil
  if fits then
    for i = 1, nq do
      if undo[3 + 2 * i] then
        redis.call('RPOP', KEYS[1 + i])
        if undo[4 + 2 * i] then
          redis.call('LPUSH', KEYS[1 + i], undo[4 + 2 * i])
        end
      end
    end
  end
  redis.call('HSET', KEYS[1], 's', encode(s))
  return 1
end

if r.rate > 0 and s.ta then
  s.tk = math.min(r.burst, s.tk + 1)
end
if fits then
  for i = 1, nq do
    if redis.call('LREM', KEYS[1 + i], -1, start) > 0 and undo then
      undo[3 + 2 * i] = false
    end
  end
end
redis.call('HSET', KEYS[1], 's', encode(s))
return 2
