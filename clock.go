package polite

import "time"

// clock reads the time with a single monotonic clock read: its readings
// are its epoch plus the monotonic time elapsed since. The wall-clock part
// ignores later adjustments of the system clock, which is what pacing
// wants; time.Now reads both clocks and costs twice as much.
type clock struct{ epoch time.Time }

func newClock() clock { return clock{epoch: time.Now()} }

func (c clock) now() time.Time { return c.epoch.Add(time.Since(c.epoch)) }
