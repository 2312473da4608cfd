-- cancel gives back the turn of epoch ARGV[x] numbered ARGV[x+1], planned
-- at ARGV[x+2], under the rule (read_rule): keyState.cancel. Every
-- cancelled turn that no later live turn follows is given back; one with
-- a live turn after it frees its quota slots only. It returns 1, or 0 when
-- the domain is gone or its state is not the one the turn was held in
-- (another epoch).
local rule, extra = read_rule(ARGV)
local epoch, serial, planned = tonumber(ARGV[extra]), tonumber(ARGV[extra + 1]), tonumber(ARGV[extra + 2])
local now = clock()
local s, found = load_state(KEYS)
if not found or s.epoch ~= epoch then
  return 0
end
trim(s, rule, now)
cancel(s, rule, serial, planned)
save(s, rule, now)
return 1
