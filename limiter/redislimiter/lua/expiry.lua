-- expiry returns the keys' expiry and, when it must be set again, their
-- time to live in milliseconds (nil otherwise). The keys expire at
-- quiet_at plus the time from now to quiet_at, at least a second, set
-- again whenever quiet_at passes the expiry expires_at set before, or
-- when force says so. So a busy domain seldom pays for PEXPIRE, and an
-- idle one is gone soon after it has fully recovered. quiet_at is at most
-- 5 horizons away (a start, then min_delay and jitter), so the expiry is
-- at most 10; one recorded further (by an older script) is set again.
local function expiry(now, quiet_at, expires_at, force)
  if quiet_at > expires_at or force or expires_at - now > 10 * horizon then
    local ttl = math.min(math.max(quiet_at - now, 0) + math.max(quiet_at - now, 1e6), 10 * horizon)
    return now + ttl, math.ceil(ttl / 1000)
  end
  return expires_at, nil
end
