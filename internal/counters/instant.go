package counters

import (
	"sync/atomic"
	"time"
)

// Instant is a time on the wall clock that goroutines store and load
// atomically, to the nanosecond. Its zero value holds the zero time.
type Instant struct{ unixNano atomic.Int64 }

// Store sets i to t.
func (i *Instant) Store(t time.Time) { i.unixNano.Store(t.UnixNano()) }

// Load returns the time last stored in i; the zero time if none was.
func (i *Instant) Load() time.Time {
	if n := i.unixNano.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}
