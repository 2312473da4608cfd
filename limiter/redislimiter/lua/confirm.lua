-- confirm says that the wait of the reservation of epoch ARGV[x] that
-- starts at ARGV[x+1] is over and its request starts now, after the rule as
-- reserve.lua reads it: keyState.confirm. It returns {paused, wait}:
--   - {p, 0} while the domain is paused, p the pause left: the caller
--     gives the turn back and claims the first one after the pause;
--   - {0, w} when the record (the latest request's start, s, and the tokens
--     sk left at s) does not allow a start now but in w: an earlier request
--     started later than planned, after this turn was granted;
--   - {0, 0} otherwise, and the start is recorded. A start later than
--     planned by more than slip moves the plan as keyState.slip does: the
--     quota slots to now, and, unless a later turn is planned at or after
--     now, the latest start and the bucket's time to now (its token counts
--     as taken then), so the turns claimed after it follow from now.
-- A domain gone, or of another epoch, has nothing to keep apart from:
-- {0, 0}, recording nothing. Waits the record asks for of up to slip are
-- not made (so that a start that is late by the usual round trip does not
-- cost another); the record keeps the debt, so it does not add up.
local nq = #KEYS - 1
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local min_delay, jitter = math.min(tonumber(ARGV[3]), 2 * horizon), math.min(tonumber(ARGV[4]), 2 * horizon)
local epoch, start = tonumber(ARGV[5 + 2 * nq]), tonumber(ARGV[6 + 2 * nq])

local now = clock()
local raw = redis.call('HGET', KEYS[1], 's')
if not raw then
  return {0, 0}
end
local tk, ta, l, p, qa, seq, _, xa, utk, uta, ul, uqa, uq, ep, s, sk = cmsgpack.unpack(raw)
if ep ~= epoch then
  return {0, 0}
end
if p > now then
  return {p - now, 0}
end

-- The record: the earliest start it allows, u, and its bucket's tokens at
-- now.
local u, level = recorded(s, sk, now, min_delay, rate, burst)
if u - now > slip then
  return {0, u - now}
end

local ms
if now - start > slip then
  if nq > 0 then
    local was, is = string.format('%.0f', start), string.format('%.0f', now)
    for i = 1, nq do
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
        qa = math.max(qa, now + math.min(tonumber(ARGV[4 + 2 * i]), 2 * horizon))
      end
    end
  end
  if not l or l < now then
    l = now
    qa = math.max(qa, now + min_delay + jitter)
    if rate > 0 and ta and ta < now then
      ta = now
      qa = math.max(qa, now + math.min(math.ceil((burst - tk) * 1e6 / rate), 2 * horizon))
    end
  end
end
s, sk = now, nil
qa = math.max(qa, now + min_delay)
if rate > 0 then
  sk = level - 1
  qa = math.max(qa, now + math.min(math.ceil((burst - sk) * 1e6 / rate), 2 * horizon))
end

xa, ms = expiry(now, qa, xa, false)
redis.call('HSET', KEYS[1], 's', cmsgpack.pack(tk, ta, l, p, qa, seq, '', xa, utk, uta, ul, uqa, uq, ep, s, sk))
if ms then
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ms)
  end
end
return {0, 0}
