// Package record keeps the counters of one domain, which the Transport
// writes and stats.Snapshot reports.
package record

import (
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/stats"
)

// DelayThreshold is the wait beyond which a request counts as delayed.
const DelayThreshold = 10 * time.Millisecond

// Recorder holds one domain's counters. The zero Recorder is ready to use;
// it is safe for concurrent use and never blocks.
type Recorder struct {
	// Every request writes these: they share one cache line.
	total, inFlight, lastRequestUnixNano atomic.Int64
	responses                            [6]atomic.Int64

	delayed, canceled, failed atomic.Int64
	disallowed, robots        atomic.Int64
	throttled, degraded       atomic.Int64
	waitNanos, pausedNanos    atomic.Int64
}

// Sent records a request that passed the limiter after waiting wait.
func (r *Recorder) Sent(now time.Time, wait time.Duration, degraded bool) {
	r.total.Add(1)
	if wait > DelayThreshold {
		r.delayed.Add(1)
	}
	if wait > 0 {
		r.waitNanos.Add(int64(wait))
	}
	if degraded {
		r.degraded.Add(1)
	}
	r.lastRequestUnixNano.Store(now.UnixNano())
}

// RobotsSent records a robots.txt fetch that passed the limiter: it is
// counted apart from the requests, and its response is not counted.
func (r *Recorder) RobotsSent(now time.Time) {
	r.robots.Add(1)
	r.lastRequestUnixNano.Store(now.UnixNano())
}

// Canceled records a request whose wait failed.
func (r *Recorder) Canceled() { r.canceled.Add(1) }

// Disallowed records a request that robots.txt forbade.
func (r *Recorder) Disallowed() { r.disallowed.Add(1) }

// Failed records a sent request whose round trip returned an error.
func (r *Recorder) Failed() { r.failed.Add(1) }

// Response records a response's status code.
func (r *Recorder) Response(status int) {
	class := status / 100
	if class < 1 || class > 5 {
		class = 0
	}
	r.responses[class].Add(1)
	if status == 429 || status == 503 {
		r.throttled.Add(1)
	}
}

// Paused adds d to the time the domain spent paused at the server's request.
func (r *Recorder) Paused(d time.Duration) { r.pausedNanos.Add(int64(d)) }

// InFlight adds delta to the requests in flight.
func (r *Recorder) InFlight(delta int64) { r.inFlight.Add(delta) }

// Snapshot copies the counters into a Snapshot for domain, with the derived
// averages filled in. Pause and quota fields are left to the caller.
func (r *Recorder) Snapshot(domain string) stats.Snapshot {
	s := stats.Snapshot{
		Domain:             domain,
		TotalRequests:      r.total.Load(),
		DelayedRequests:    r.delayed.Load(),
		CanceledRequests:   r.canceled.Load(),
		FailedRequests:     r.failed.Load(),
		DisallowedRequests: r.disallowed.Load(),
		RobotsRequests:     r.robots.Load(),
		TotalWaitTime:      time.Duration(r.waitNanos.Load()),
		InFlight:           r.inFlight.Load(),
		ThrottledResponses: r.throttled.Load(),
		DegradedRequests:   r.degraded.Load(),
		PausedTime:         time.Duration(r.pausedNanos.Load()),
	}
	for i := range r.responses {
		s.Responses[i] = r.responses[i].Load()
	}
	if last := r.lastRequestUnixNano.Load(); last != 0 {
		s.LastRequestTime = time.Unix(0, last)
	}
	if s.DelayedRequests > 0 {
		s.AverageWaitTime = s.TotalWaitTime / time.Duration(s.DelayedRequests)
	}
	if s.TotalRequests > 0 {
		s.DelayRate = float64(s.DelayedRequests) / float64(s.TotalRequests)
	}
	return s
}
