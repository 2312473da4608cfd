package redislimiter

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/internal/redistest"
	"github.com/polite-go/polite/limiter"
)

// starts collects the starts that callers of several Limiters plan: the
// time each Reserve returned plus its wait, when the caller's timer fires
// and its request goes. That is what the server sees, less each wake-up's
// lateness, which the scheduler adds and the Limiter cannot know.
type starts struct {
	mu sync.Mutex
	at []time.Time
}

func (s *starts) add(t time.Time) {
	s.mu.Lock()
	s.at = append(s.at, t)
	s.mu.Unlock()
}

func (s *starts) sorted() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.at)
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// within counts the sorted starts in [from, from+w).
func within(sorted []time.Time, from time.Time, w time.Duration) int {
	i, _ := slices.BinarySearchFunc(sorted, from, func(a, b time.Time) int { return a.Compare(b) })
	j, _ := slices.BinarySearchFunc(sorted, from.Add(w), func(a, b time.Time) int { return a.Compare(b) })
	return j - i
}

// busiest is the most starts in any window [s, s+w) that opens at a start
// s in [from, to), and where it opens.
func busiest(sorted []time.Time, from, to time.Time, w time.Duration) (int, time.Time) {
	most, at := 0, time.Time{}
	for _, s := range sorted {
		if s.Before(from) || !s.Before(to) {
			continue
		}
		if n := within(sorted, s, w); n > most {
			most, at = n, s
		}
	}
	return most, at
}

// ownPace is the most starts one process's own pace allows in a window
// [s, s+w): a full bucket, then one per token: burst - 1 + ceil(rate × w).
func ownPace(rule *limiter.Rule, w time.Duration) int {
	return rule.Burst - 1 + int(math.Ceil(rule.Rate*w.Seconds()))
}

// TestOutageKeepsEachWorkersPace: two workers (Limiters) at 5/s, burst 1,
// each with four requests in flight, share a domain through Redis; Redis
// is killed mid-run and restarted, empty, three seconds later. In every
// window of about 2s the two together start no more requests than their
// own paces allow (2 × 10): a worker's fallback starts after the turns Redis granted
// it, and its first turns through Redis again come after its fallback's.
// Before, each fallback started with a full bucket while the turns Redis
// had granted still went: 27 starts in the first 2s after the kill.
func TestOutageKeepsEachWorkersPace(t *testing.T) {
	srv := redistest.Start(t)
	rule := &limiter.Rule{Rate: 5, Burst: 1}
	// Windows are 1.9s: as many starts fit in them at the paces
	// (ceil(5 × 1.9) = 10 each) as in 2s, but a worker's eleventh start
	// would have to be measured 100ms early against its first: starts
	// planned exactly 200ms apart and measured a little off on a loaded
	// machine no longer make one more.
	const (
		workers  = 2
		inFlight = 4
		window   = 1900 * time.Millisecond
	)
	var all starts
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		l, err := New(newClient(t, srv), Options{Logger: slog.New(slog.DiscardHandler), ProbeInterval: 50 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		for range inFlight {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					var res limiter.Reservation
					err := l.Reserve(context.Background(), &limiter.Request{Key: "outage.example", Rule: rule}, &res)
					if !assert.NoError(t, err) || !assert.True(t, res.OK) {
						return
					}
					all.add(time.Now().Add(res.Wait))
					time.Sleep(res.Wait)
				}
			})
		}
	}
	time.Sleep(2 * time.Second)
	killed := time.Now()
	srv.Kill()
	time.Sleep(3 * time.Second)
	restarted := time.Now()
	srv.Restart()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()

	sorted := all.sorted()
	allowed := workers * ownPace(rule, window)
	first := within(sorted, killed, window)
	most, at := busiest(sorted, killed.Add(-window), sorted[len(sorted)-1], window)
	back, backAt := busiest(sorted, restarted.Add(-window), sorted[len(sorted)-1], window)
	t.Logf("first %v after the kill: %d starts; busiest %v window: %d starts, at %v after the kill; around the restart: %d, at %v after it; the workers' own paces allow %d",
		window, first, window, most, at.Sub(killed).Round(time.Millisecond), back, backAt.Sub(restarted).Round(time.Millisecond), allowed)
	// One more than the paces allow is tolerated: a start that Redis
	// granted is planned on this machine's clock as the call's return plus
	// its wait, so two turns Redis spaced by exactly the rate can look
	// closer by the difference between two round trips, and a window can
	// catch one at its edge.
	assert.LessOrEqual(t, first, allowed+1, "the first %v after the kill", window)
	assert.LessOrEqual(t, most, allowed+1, "every %v window from the kill on", window)
}
