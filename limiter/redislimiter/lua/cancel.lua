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
-- made in (another epoch). The record (s, sk) stays, unlike keyState's,
-- which the undo restores: a start it holds may have been made, and
-- keeping one that was not only holds the next starts back. The state is
-- as reserve.lua describes it.
local nq = #KEYS - 1
local epoch, id = tonumber(ARGV[5 + 2 * nq]), tonumber(ARGV[6 + 2 * nq])
local start = ARGV[7 + 2 * nq]
local raw = redis.call('HGET', KEYS[1], 's')
if not raw then
  return 0
end
local tk, ta, l, p, qa, seq, _, xa, utk, uta, ul, uqa, uq, ep, s, sk = cmsgpack.unpack(raw)
if ep ~= epoch then
  return 0
end

-- Both ways the domain is quiet no later than before, so the keys' expiry
-- stands.
if seq == id and uqa then
  tk, ta, l, qa = utk, uta, ul, math.max(uqa, p)
  if s then
    -- The record stays: the start it holds may have been made.
    local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
    qa = math.max(qa, s + math.min(tonumber(ARGV[3]), 2 * horizon))
    if rate > 0 and sk then
      qa = math.max(qa, s + math.min(math.ceil((burst - sk) * 1e6 / rate), 2 * horizon))
    end
  end
  for i = 1, nq do
    local key = KEYS[1 + i]
    local evicted = uq and uq[key]
    if evicted then
      redis.call('RPOP', key)
      if evicted ~= '' then
        redis.call('LPUSH', key, evicted)
      end
    end
  end
  redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, '', xa, nil, nil, nil, nil, nil, ep, s, sk))
  return 1
end

-- A list this removes a start from can no longer be undone by popping its
-- tail.
for i = 1, nq do
  local key = KEYS[1 + i]
  if redis.call('LREM', key, -1, start) > 0 and uq then
    uq[key] = nil
  end
end
redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, '', xa, utk, uta, ul, uqa, uq, ep, s, sk))
return 2
