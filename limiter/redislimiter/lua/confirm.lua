-- confirm says that the wait of the turn of epoch ARGV[x] numbered
-- ARGV[x+1], planned at ARGV[x+2], is over and its request starts now,
-- under the rule (read_rule): keyState.confirm. It returns {paused, wait,
-- again}:
--   - {p, 0, 1} when the turn must be given back and held anew, after
--     the turns handed out: the domain is paused (p the pause left), or
--     the turn starts so late that its start would overfill a quota's
--     window (p is 0);
--   - {0, w, 0} when the starts made do not allow a start now but in w:
--     an earlier request started later than planned, after this turn was
--     granted;
--   - {0, 0, 0} otherwise, and the start is noted. A start later than
--     planned by more than slip moves the plan as keyState.slip does: its
--     quota slots to now, and the turns held after it follow from now.
-- A turn that reserve began at once, whose request leaves late, is the
-- departure gate's too: its departure, when no later one was noted, is
-- taken back and noted at now.
-- A domain gone, or of another epoch, has nothing to keep apart from:
-- {0, 0, 0}, noting nothing. Waits the starts made ask for of up to slip
-- are not made (so that a start that is late by the usual round trip does
-- not cost another); the state keeps the debt, so it does not add up.
local rule, extra = read_rule(ARGV)
local epoch, serial, planned = tonumber(ARGV[extra]), tonumber(ARGV[extra + 1]), tonumber(ARGV[extra + 2])

local now = clock()
local s, found = load_state(KEYS)
if not found or s.epoch ~= epoch then
  return {0, 0, 0}
end
trim(s, rule, now)
local begun = find(s, serial)
if begun and s.turns[begun][STARTED] and s.turns[begun][MADE] == s.made then
  -- Begun at once by reserve, its request leaves late: its departure is
  -- noted anew at the gate, now, as limiter.Memory notes it only there.
  local turn = s.turns[begun]
  s.sent, s.sent_tokens, s.made, turn[STARTED] = turn[SENT], turn[SENT_TOKENS], s.made - 1, nil
end
if s.paused_until > now then
  return {s.paused_until - now, 0, 1}
end
local late = now - planned > slip
if late and not fits_quotas(s, rule, planned, now) then
  return {0, 0, 1}
end
local wait = allowed(s, rule, now) - now
if wait > slip then
  return {0, wait, 0}
end

if late then
  remove_start(s, planned)
  add_start(s, now)
  follow(s, rule, now)
end
local i = find(s, serial)
if i then
  begin_turn(s, rule, s.turns[i], now)
  local kept = {}
  for j = i, #s.turns do
    kept[#kept + 1] = s.turns[j]
  end
  s.turns = kept
else
  note_start(s, rule, now)
end
save(s, rule, now)
return {0, 0, 0}
