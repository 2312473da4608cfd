-- reserve claims the earliest start every rule allows, as Memory.ReserveAt
-- and keyState.commit do. ARGV after the rule: the jitter sample and the
-- longest acceptable wait in nanoseconds (0: any). It returns
-- {1, wait, reason, id, start}, or {0, wait, reason} when the wait is too
-- long, in which case it changes nothing.
local nq = #KEYS - 1
local r, x = read_rule(nq)
local sample = tonumber(ARGV[x])
local max_wait = tonumber(ARGV[x + 1])
local now = clock()
local s = load_state(r)
local n, oldest = read_windows(s, r)
local t, reason = earliest(now, s, r, oldest, sample)
if max_wait > 0 and (t - now) * 1000 > max_wait then
  return {0, t - now, reason}
end

local undo = {s.tk, s.ta, s.l, s.qa}
local qa = math.max(s.qa, t + r.min_delay + r.jitter)
if r.rate > 0 then
  s.tk = tokens_at(s, t, r) - 1
  s.ta = t
  qa = math.max(qa, t + math.ceil((r.burst - s.tk) * 1e6 / r.rate))
end
if nq > 0 and not s.fits then
  redis.call('DEL', unpack(KEYS, 2))
end
local made = false -- a list was made, without an expiry yet
for i = 1, nq do
  local key, evicted = KEYS[1 + i], nil
  redis.call('RPUSH', key, fmt_time(t))
  if n[i] >= r.requests[i] then
    evicted = redis.call('LPOP', key)
  end
  made = made or n[i] == 0
  undo[3 + 2 * i], undo[4 + 2 * i] = true, evicted
  qa = math.max(qa, t + r.windows[i])
end
s.l, s.qa, s.seq, s.sig, s.undo = t, qa, s.seq + 1, r.sig, undo
local ms = expiry(now, s, made)
redis.call('HSET', KEYS[1], 's', encode(s))
expire(ms)
return {1, t - now, reason, s.seq, t}
