package redislimiter

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/limiter"
)

// health is whether Redis answers, and what the Limiter does about it.
type health struct {
	down atomic.Bool

	mu     sync.Mutex
	cause  error                // why Redis was found unavailable
	since  time.Time            // when
	pauses map[string]time.Time // made while Redis was away, to carry over
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

// markDown notes that Redis failed with err: the first failure logs and
// starts the probe; later ones, until Redis answers, change nothing.
func (l *Limiter) markDown(err error) {
	h := &l.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down.Load() {
		return
	}
	h.down.Store(true)
	h.cause, h.since = err, time.Now()
	l.logger.Warn("redislimiter: redis unavailable, "+l.mode.doing(), "mode", l.mode.String(), "err", err)
	if !h.closed {
		h.wg.Add(1)
		go l.probeLoop()
	}
}

// doing says what a Limiter does while Redis is unavailable.
func (m mode) doing() string {
	switch m {
	case modeFailOpen:
		return "not pacing until it answers"
	case modeFailClosed:
		return "failing requests until it answers"
	}
	return "pacing in this process until it answers"
}

// probeLoop probes Redis until its calls work again or the Limiter is
// closed.
func (l *Limiter) probeLoop() {
	defer l.health.wg.Done()
	ticker := time.NewTicker(l.probe)
	defer ticker.Stop()
	for {
		select {
		case <-l.health.stop:
			return
		case <-ticker.C:
		}
		if l.recover() {
			return
		}
	}
}

// recover returns to the shared pace if the Limiter's own call works
// again, after carrying over the pauses made while Redis was away. The
// call is a reservation on a key of the Limiter's own, not a PING: a Redis
// that answers PING but refuses writes (full under noeviction, a read-only
// replica) would otherwise recover every probe interval, fail the next
// request and log both each time.
func (l *Limiter) recover() bool {
	ctx := context.Background()
	if err := l.probeCall(ctx); err != nil {
		return false
	}
	h := &l.health
	for {
		h.mu.Lock()
		pauses := h.pauses
		h.pauses = nil
		if len(pauses) == 0 {
			h.down.Store(false)
			since := h.since
			h.mu.Unlock()
			l.logger.Info("redislimiter: redis answers again, sharing the pace", "down_for", time.Since(since).Round(time.Millisecond))
			return true
		}
		h.mu.Unlock()
		now := time.Now()
		for key, until := range pauses {
			if d := until.Sub(now); d > 0 {
				if err := l.pause(ctx, key, d); err != nil {
					for key, until := range pauses {
						h.remember(key, until)
					}
					return false
				}
			}
			delete(pauses, key)
		}
	}
}

// probeCall runs the reserve script as every request does, writes
// included, under an empty rule on the key prefix + "{%probe}:state",
// which no domain's keys share (hashTag escapes "%"). The key expires a
// second after the latest probe.
func (l *Limiter) probeCall(ctx context.Context) error {
	_, err := l.run(ctx, l.scripts.reserve, []string{l.prefix + "{%probe}:state"}, ruleArgs(limiter.Rule{}, 0))
	return err
}

// remember keeps a pause made while Redis is away, to carry it over.
func (h *health) remember(key string, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pauses == nil {
		h.pauses = make(map[string]time.Time)
	}
	if until.After(h.pauses[key]) {
		h.pauses[key] = until
	}
}

// whileDown is what Cancel and Pause return while Redis is unavailable.
func (l *Limiter) whileDown() error {
	if l.mode == modeFailClosed {
		return l.unavailable()
	}
	return nil
}

// unavailable is the error of a FailClosed Limiter while Redis is away.
func (l *Limiter) unavailable() error {
	h := &l.health
	h.mu.Lock()
	cause := h.cause
	h.mu.Unlock()
	if cause == nil {
		return ErrUnavailable
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, cause)
}
