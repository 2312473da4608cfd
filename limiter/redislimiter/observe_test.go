package redislimiter

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// confirmAll confirms res at offset now on f's clock, and again when its
// turn moves, and returns the offset it may start at.
func confirmAll(t *testing.T, f *fakeClock, res *limiter.Reservation, now time.Duration) time.Duration {
	t.Helper()
	for range 10 {
		f.at(t, now)
		more, err := res.Confirm(context.Background(), nil)
		require.NoError(t, err)
		if more == 0 {
			return now
		}
		now += more
	}
	t.Fatal("the turn kept moving")
	return 0
}

func TestConfirmMovesATurnPausedMeanwhile(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	ms := time.Millisecond

	t.Run("one turn", func(t *testing.T) {
		f := newFakeClock(t, srv)
		r := limiter.Request{Key: "moved.example", Rule: &limiter.Rule{MinDelay: time.Second}}
		f.at(t, 0)
		var first, second, third limiter.Reservation
		for _, res := range []*limiter.Reservation{&first, &second, &third} {
			var err error
			*res, err = f.Reserve(ctx, r)
			require.NoError(t, err)
		}
		require.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, []time.Duration{first.Wait(), second.Wait(), third.Wait()})
		assert.Equal(t, time.Second, confirmAll(t, f, &second, time.Second), "no pause: the turn stands")

		f.at(t, 1500*ms)
		require.NoError(t, f.pause(ctx, r.Key, 3*time.Second)) // another worker's, until 4.5s
		f.at(t, 2*time.Second)
		more, err := third.Confirm(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, 2500*ms, more, "the turn moves after the pause")
		assert.Equal(t, limiter.Reason("shared"), third.Reason())
		assert.Equal(t, 4500*ms, confirmAll(t, f, &third, 4500*ms))

		next, err := f.Reserve(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, time.Second, next.Wait(), "the next turn follows the moved one")
	})

	t.Run("turns woken inside a pause go after it without a burst", func(t *testing.T) {
		f := newFakeClock(t, srv)
		r := limiter.Request{Key: "burst.example", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
		f.at(t, 0)
		_, err := f.Reserve(ctx, r)
		require.NoError(t, err)
		var queued [3]limiter.Reservation
		for i := range queued {
			queued[i], err = f.Reserve(ctx, r)
			require.NoError(t, err)
		}
		f.at(t, 500*ms)
		require.NoError(t, f.pause(ctx, r.Key, 10*time.Second))
		var starts []time.Duration
		for i := range queued {
			starts = append(starts, confirmAll(t, f, &queued[i], time.Duration(i+1)*time.Second))
		}
		assert.Equal(t, []time.Duration{10500 * ms, 11500 * ms, 12500 * ms}, starts)
	})
}

func TestConfirmWhileRedisIsDown(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	l, _ := newTestLimiter(t, srv)
	r := limiter.Request{Key: "confirm-down.example", Rule: &limiter.Rule{MinDelay: 200 * time.Millisecond}}
	var first, second, third limiter.Reservation
	for _, res := range []*limiter.Reservation{&first, &second, &third} {
		var err error
		*res, err = l.Reserve(ctx, r)
		require.NoError(t, err)
		require.False(t, res.Degraded())
	}
	srv.Kill()

	more, err := second.Confirm(ctx, nil)
	require.NoError(t, err)
	assert.Zero(t, more, "the turn Redis gave stands")
	assert.False(t, second.Degraded())

	added, err := l.Observe(ctx, r, limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: 5 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, added)
	more, err = third.Confirm(ctx, nil)
	require.NoError(t, err)
	assert.Greater(t, more, 4*time.Second, "but not inside this process's own pause")
	assert.True(t, third.Degraded(), "the fallback holds the new turn")
	assert.Equal(t, limiter.Reason("retry-after"), third.Reason())
}

func TestObserveSharesOnlyPauses(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	// A Limiter names a pause its own when it lasts no longer than the one
	// it knows of, within a timeout: below the second the backoff steps
	// differ by.
	a, _ := newTestLimiter(t, srv, WithTimeout(500*time.Millisecond))
	b, _ := newTestLimiter(t, srv, WithTimeout(500*time.Millisecond))
	rule := limiter.Rule{Rate: 100, Burst: 10}

	t.Run("retry-after", func(t *testing.T) {
		r := limiter.Request{Key: "retry.example", Rule: &rule}
		added, err := a.Observe(ctx, r, limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: 5 * time.Second})
		require.NoError(t, err)
		assert.Equal(t, 5*time.Second, added)
		for _, tt := range []struct {
			name string
			l    *Limiter
			why  limiter.Reason
		}{{"the worker that heard it", a, "retry-after"}, {"another worker", b, "shared"}} {
			st, err := tt.l.State(ctx, r)
			require.NoError(t, err)
			assert.Greater(t, st.Paused, 4*time.Second, tt.name)
			assert.LessOrEqual(t, st.Paused, 5*time.Second, tt.name)
			assert.Equal(t, tt.why, st.PauseReason, tt.name)
			assert.Equal(t, tt.why, st.Reason, tt.name)
			res, err := tt.l.Reserve(ctx, r)
			require.NoError(t, err)
			assert.Greater(t, res.Wait(), 4*time.Second, tt.name)
			assert.Equal(t, tt.why, res.Reason(), tt.name)
			require.NoError(t, res.Cancel(ctx))
		}
	})

	t.Run("backoff steps are per process", func(t *testing.T) {
		r := limiter.Request{Key: "backoff.example", Rule: &rule}
		unavailable := func(l *Limiter) time.Duration {
			added, err := l.Observe(ctx, r, limiter.Observation{Status: http.StatusServiceUnavailable, Sent: time.Now()})
			require.NoError(t, err)
			return added
		}
		assert.Equal(t, time.Second, unavailable(a))
		time.Sleep(time.Millisecond)
		// The step doubles: the pause ends a second later, and as much
		// later again as the time between the two responses.
		added := unavailable(a)
		assert.GreaterOrEqual(t, added, time.Second)
		assert.Less(t, added, 2*time.Second, "not tripled")
		st, err := b.State(ctx, r)
		require.NoError(t, err)
		assert.Greater(t, st.Paused, time.Second, "b is paused by a's second step")
		assert.Equal(t, limiter.Reason("shared"), st.PauseReason)
		assert.Equal(t, time.Second, unavailable(b), "b's own backoff starts at its first step")
		st, err = b.State(ctx, r)
		require.NoError(t, err)
		assert.Greater(t, st.Paused, time.Second, "a shorter pause never shortens a longer one")
		assert.Equal(t, limiter.Reason("shared"), st.PauseReason, "the longer pause is a's")
	})

	t.Run("crawl-delay", func(t *testing.T) {
		f1, f2 := newFakeClock(t, srv), newFakeClock(t, srv)
		f1.at(t, 0)
		r := limiter.Request{Key: "crawl.example", Rule: &rule}
		added, err := f1.Observe(ctx, r, limiter.Observation{Host: "http://crawl.example", CrawlDelay: 2 * time.Second})
		require.NoError(t, err)
		assert.Zero(t, added)
		st, err := f1.State(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, 2*time.Second, st.MinDelay)
		st, err = f2.State(ctx, r)
		require.NoError(t, err)
		assert.Zero(t, st.MinDelay, "the other worker did not read the robots.txt")

		reserve := func(l *fakeClock) *limiter.Reservation {
			res, err := l.Reserve(ctx, r)
			require.NoError(t, err)
			return &res
		}
		assert.Zero(t, reserve(f1).Wait())
		res := reserve(f1)
		assert.Equal(t, 2*time.Second, res.Wait())
		assert.Equal(t, limiter.Reason("crawl-delay"), res.Reason())
		res = reserve(f2)
		assert.Equal(t, 2*time.Second, res.Wait(), "queued after f1's turn")
		assert.Equal(t, limiter.Reason("queue"), res.Reason())
		assert.Equal(t, 2*time.Second, reserve(f2).Wait(), "but f2 keeps no gap of its own")
		res = reserve(f1)
		assert.Equal(t, 4*time.Second, res.Wait())
		assert.Equal(t, limiter.Reason("crawl-delay"), res.Reason())
	})

	t.Run("adaptive", func(t *testing.T) {
		f := newFakeClock(t, srv)
		f.at(t, 0)
		adaptive := limiter.Rule{Rate: 100, Burst: 10, Adaptive: true}
		r := limiter.Request{Key: "adaptive.example", Rule: &adaptive}
		_, err := f.Observe(ctx, r, limiter.Observation{Status: http.StatusOK, Sent: time.Now(), Latency: 3 * time.Second})
		require.NoError(t, err)
		st, err := f.State(ctx, r)
		require.NoError(t, err)
		gap := (10*time.Millisecond + 3*time.Second) / 2 // halfway from the rule's pace to the latency
		assert.Equal(t, gap, st.MinDelay)
		_, err = f.Reserve(ctx, r)
		require.NoError(t, err)
		res, err := f.Reserve(ctx, r)
		require.NoError(t, err)
		assert.InDelta(t, gap, res.Wait(), float64(time.Microsecond), "rounded up to Redis's microseconds")
		assert.Equal(t, limiter.Reason("adaptive"), res.Reason())
	})
}
