-- recorded returns the earliest start at or after now that the record of
-- the latest actual start s (nil if none), with sk tokens left in its
-- bucket then, allows, and the bucket's tokens at now, as keyState.recorded
-- reads Memory's record.
local function recorded(s, sk, now, min_delay, rate, burst)
  local u, level = now, burst
  if s then
    if min_delay > 0 and s + min_delay > u then
      u = s + min_delay
    end
    if rate > 0 and sk then
      level = math.min(sk + math.max(now - s, 0) * rate / 1e6, burst)
      if level < 1 then
        u = math.max(u, now + math.min(math.ceil((1 - level) * 1e6 / rate), 2 * horizon))
      end
    end
  end
  return u, level
end
