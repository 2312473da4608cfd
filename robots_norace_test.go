//go:build !race

package polite

// raceEnabled tells tests that the race detector slows them down.
const raceEnabled = false
