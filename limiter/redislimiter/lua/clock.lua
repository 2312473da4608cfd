-- clock returns Redis's own time in microseconds, so that every worker
-- shares one clock whatever their own clocks say. (Lua turns TIME's two
-- strings into numbers as it computes, quicker than tonumber's calls.)
local function clock()
  local t = redis.call('TIME')
  return t[1] * 1000000 + t[2]
end
