-- recorded returns the earliest start at or after now that the record of
-- the latest actual start sent (nil if none), with sent_tokens left in its
-- bucket then, allows, and the bucket's tokens at now, as keyState.recorded
-- reads Memory's record.
local function recorded(sent, sent_tokens, now, min_delay, rate, burst)
  local allowed, level = now, burst
  if sent then
    if min_delay > 0 and sent + min_delay > allowed then
      allowed = sent + min_delay
    end
    if rate > 0 and sent_tokens then
      level = tokens_then(sent_tokens, sent, math.max(now, sent), rate, burst)
      if level < 1 then
        allowed = math.max(allowed, now + token_time(1 - level, rate))
      end
    end
  end
  return allowed, level
end
