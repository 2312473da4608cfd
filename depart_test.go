package polite_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// slowFirstReserve is a limiter.Memory whose first Reserve of key returns
// only after delay: a slow step between a request's turn being decided
// and the request leaving, as a loaded machine makes one.
type slowFirstReserve struct {
	*limiter.Memory
	key   string
	delay time.Duration
	done  atomic.Bool
}

func (s *slowFirstReserve) Reserve(ctx context.Context, r limiter.Request) (limiter.Reservation, error) {
	res, err := s.Memory.Reserve(ctx, r)
	if r.Key == s.key && s.done.CompareAndSwap(false, true) {
		time.Sleep(s.delay)
	}
	return res, err
}

// TestTurnCountsFromTheDeparture checks, from the server's side, that a
// request whose turn came at once but which left 400 ms later moves the
// next turn, in its domain and in a scope: at 2/s, the next request
// arrives 500 ms after the late one, not 100 ms (as when a turn counted
// from when it was decided).
func TestTurnCountsFromTheDeparture(t *testing.T) {
	half := config.Limit{RequestsPerSecond: 2, Burst: 1}
	tests := []struct {
		name   string
		key    string // the key whose first reservation is slow
		second string // the URL of the second request
		opts   []polite.Option
	}{
		{"domain", "a.test", "http://a.test/2", []polite.Option{polite.WithDefault(half)}},
		{"global scope", "(global)", "http://b.test/", []polite.Option{polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10}),
			polite.WithGlobalLimit(half)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				arrivals := map[string]time.Time{}
				base := baseFunc(func(req *http.Request) (*http.Response, error) {
					mu.Lock()
					arrivals[req.URL.String()] = time.Now()
					mu.Unlock()
					return answer(req, http.StatusOK), nil
				})
				l := &slowFirstReserve{Memory: limiter.NewMemory(), key: tt.key, delay: 400 * time.Millisecond}
				tr := newTransport(t, base, append(tt.opts, polite.WithLimiter(l), polite.WithMaxWait(time.Hour))...)
				var wg sync.WaitGroup
				wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://a.test/1")) })
				time.Sleep(100 * time.Millisecond)
				wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), tt.second)) })
				wg.Wait()
				first, second := arrivals["http://a.test/1"], arrivals[tt.second]
				require.False(t, first.IsZero() || second.IsZero())
				assert.GreaterOrEqual(t, second.Sub(first), 500*time.Millisecond, "the next turn follows the late departure")
			})
		})
	}
}

// slowDebugHandler is a slog.Handler whose first Enabled check at Debug
// sleeps for delay: a request held up after its departure was noted (the
// Transport logs a wait there), as a loaded machine holds goroutines up.
type slowDebugHandler struct {
	slog.Handler
	delay time.Duration
	done  atomic.Bool
}

func (h *slowDebugHandler) Enabled(ctx context.Context, level slog.Level) bool {
	if level == slog.LevelDebug && h.done.CompareAndSwap(false, true) {
		time.Sleep(h.delay)
	}
	return false
}

// TestRequestHeldUpAfterTheGateIsNotedWhenItLeaves checks, from the
// server's side, that a request held up for 300 ms after the departure
// gate let it go (at 2/s, the second request, which waited) passes the
// gate again before the base: the third request arrives 500 ms after the
// second really arrived, not 200 ms.
func TestRequestHeldUpAfterTheGateIsNotedWhenItLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &arrivalBase{}
		logger := slog.New(&slowDebugHandler{Handler: slog.DiscardHandler, delay: 300 * time.Millisecond})
		tr := newTransport(t, base, polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1}),
			polite.WithLogger(logger), polite.WithMaxWait(time.Hour))
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://a.test/")) })
			time.Sleep(time.Millisecond)
		}
		wg.Wait()
		arrivals := base.sorted()
		require.Len(t, arrivals, 3)
		for i := 1; i < len(arrivals); i++ {
			assert.GreaterOrEqual(t, arrivals[i].Sub(arrivals[i-1]), 500*time.Millisecond, "gap before arrival %d", i)
		}
	})
}

// TestRequestHeldUpAfterAnInstantTurnIsNotedWhenItLeaves checks, from the
// server's side, that a request whose turn came at once (at 2/s, the
// first), held up for 300 ms just before the base (in Trace.Sent), passes
// the gate again: the second request, asked for at 100 ms, arrives 500 ms
// after the first really arrived, not 200 ms.
func TestRequestHeldUpAfterAnInstantTurnIsNotedWhenItLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &arrivalBase{}
		var held atomic.Bool
		trace := &polite.Trace{Sent: func(context.Context, string, bool) {
			if held.CompareAndSwap(false, true) {
				time.Sleep(300 * time.Millisecond)
			}
		}}
		tr := newTransport(t, base, polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1}),
			polite.WithTrace(trace), polite.WithMaxWait(time.Hour))
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://a.test/1")) })
		time.Sleep(100 * time.Millisecond)
		wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://a.test/2")) })
		wg.Wait()
		arrivals := base.sorted()
		require.Len(t, arrivals, 2)
		assert.Equal(t, 300*time.Millisecond, arrivals[0].Sub(start), "the first request is held up")
		assert.GreaterOrEqual(t, arrivals[1].Sub(arrivals[0]), 500*time.Millisecond, "the next turn follows the late departure")
	})
}
