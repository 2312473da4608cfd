-- expiry returns the keys' expiry and, when it must be set again, its
-- time to live in milliseconds (nil otherwise). The keys expire at qa plus
-- the time from now to qa, at least a second, set again whenever qa passes
-- the expiry xa set before, or when force says so. So a busy domain seldom
-- pays for PEXPIRE, and an idle one is gone soon after it has fully
-- recovered. qa is at most 5 horizons away (a start, then min_delay and
-- jitter), so the expiry is at most 10; one recorded further (by an older
-- script) is set again.
local function expiry(now, qa, xa, force)
  if qa > xa or force or xa - now > 10 * horizon then
    local ttl = math.min(math.max(qa - now, 0) + math.max(qa - now, 1e6), 10 * horizon)
    return now + ttl, math.ceil(ttl / 1000)
  end
  return xa, nil
end
