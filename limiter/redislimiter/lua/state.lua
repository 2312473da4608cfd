-- state reports the domain now, claiming nothing, as keyState.state does:
-- {wait, reason, paused, then each quota's remaining and next_free}.
local nq = #KEYS - 1
local r = read_rule(nq)
local now = clock()
local s = load_state(r)
local _, oldest = read_windows(s, r)
local t, reason = earliest(now, s, r, oldest, 0)
local out = {t - now, reason, math.max(0, s.p - now)}
for i = 1, nq do
  local remaining, next_free = r.requests[i], 0
  if s.fits then
    for _, v in ipairs(redis.call('LRANGE', KEYS[1 + i], 0, -1)) do
      local ends = tonumber(v) + r.windows[i]
      if ends > now then
        if remaining == r.requests[i] then
          next_free = ends - now
        end
        remaining = remaining - 1
      end
    end
  end
  out[#out + 1], out[#out + 2] = remaining, next_free
end
return out
