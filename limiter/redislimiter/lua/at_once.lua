-- reserve_at_once takes reserve's commonest call at now for s under rule
-- in fewer steps: a start at once, for a domain with a start planned
-- before (s.latest), no quota in the rule nor a history window in the
-- state, not paused, nothing held back by the caller (not_before 0), every
-- gap of the plan and of the starts made over at now, the jitter sample's
-- too, and at most one turn kept, which this start lets go. It holds the
-- start, begins its turn, keeps that turn alone and saves s, as trim,
-- earliest, allowed, hold, begin_turn, keep and save would, and returns the
-- turn's number; but it calls fewer functions, makes the turn it lets go
-- the new one instead of a new table, and computes the quiet time and packs
-- the state from what it knows.
-- Otherwise it returns nil and changes nothing, and reserve.lua takes the
-- general path.
local function reserve_at_once(s, rule, now, sample, not_before)
  local latest, rate, min_delay = s.latest, rule.rate, rule.min_delay
  if not latest or latest > now or not_before > 0 or s.paused_until > now or s.window ~= 0 or #rule.quotas > 0 then
    return nil
  end
  if latest + min_delay > now or latest + sample > now then
    return nil
  end
  -- The starts made allow a start at now (allowed), which this asks in a
  -- stricter way: the gap since the latest start made is over, and its
  -- bucket holds a token.
  local sent = s.sent
  if sent and sent + min_delay > now then
    return nil
  end
  local planned, made = rule.burst, rule.burst -- the buckets' levels at now
  if rate > 0 then
    planned = level(s.tokens, s.tokens_at, now, rule)
    made = level(s.sent_tokens, s.sent_tokens and sent, now, rule)
    if 1 - planned > 1e-9 or 1 - made > 1e-9 then
      return nil
    end
  end
  -- The turn kept, if any, is one that keep lets go once this start is
  -- made: started before it, or due by now.
  local turns, count = s.turns, s.made + 1
  local turn = turns[1]
  if turns[2] or turn and (turn[STARTED] and turn[MADE] == count or not turn[STARTED] and turn[AT] > now) then
    return nil
  end

  -- Nothing holds the start back: hold it (hold), begin it (begin_turn)
  -- and keep its turn alone (keep).
  if not s.epoch then
    s.epoch, s.serial = now % 4294967295 + 1, 0
  end
  local serial, tokens, tokens_at, sent_tokens = (s.serial + 1) % 4294967296, s.tokens, s.tokens_at, s.sent_tokens
  if turn then
    turn[SERIAL], turn[AT], turn[TOKENS], turn[TOKENS_AT], turn[LATEST] = serial, now, tokens, tokens_at, latest
    turn[STARTED], turn[SENT], turn[SENT_TOKENS], turn[MADE], turn[CANCELLED] = true, sent, sent_tokens, count, nil
  else
    turns[1] = {serial, now, tokens, tokens_at, latest, true, sent, sent_tokens, count, nil}
  end
  -- quiet: when the gaps after now are over and both buckets, each of
  -- which took a token at now, are full again
  local quiet_after = min_delay + rule.jitter
  if rate > 0 then
    s.tokens, s.tokens_at, s.sent_tokens = planned - 1, now, made - 1
    local refill = token_time(rule.burst - (planned < made and planned or made) + 1, rate)
    if refill > quiet_after then
      quiet_after = refill
    end
  else
    s.sent_tokens = nil
  end
  local quiet_at = now + quiet_after
  local expires_at, ttl = expiry(now, quiet_at, s.expires_at, false)
  s.serial, s.latest, s.sent, s.made, s.noted = serial, now, now, count, true
  s.window_until, s.quiet_at, s.expires_at = now, quiet_at, expires_at

  -- save (save_state), s packed as encode packs it, from what is known
  -- here: the turn's number, start and count of starts are the state's.
  write_state(s, struct.pack(ONE_TURN_FORMAT, s.tokens or NAN, s.tokens_at or NAN, now, s.paused_until, quiet_at, serial, expires_at,
    s.epoch, now, s.sent_tokens or NAN, count, 0, now,
    serial, now, tokens or NAN, tokens_at or NAN, latest, 1, sent or NAN, sent_tokens or NAN, count))
  record_and_expire(s, rule, now, ttl)
  return serial
end
