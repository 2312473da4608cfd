//go:build !race

package robotscache

// raceEnabled tells tests that the race detector slows them down.
const raceEnabled = false
