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

// TestErrorBackoffIsShared: a server failing for one worker backs the
// domain off for every worker. The first worker's 502 and its transport
// failure each write the doubled pause to Redis; the second worker, which
// heard nothing, waits it out, and calls it "shared", while the first
// calls it "errors". A success ends the backoff.
func TestErrorBackoffIsShared(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	first, _ := newTestLimiter(t, srv)
	second, _ := newTestLimiter(t, srv)
	r := limiter.Request{Key: "failing.example", Rule: &limiter.Rule{MinDelay: time.Millisecond}}

	_, err := first.Reserve(ctx, r)
	require.NoError(t, err)
	steps := []struct {
		o    limiter.Observation
		want time.Duration
	}{
		{limiter.Observation{Status: http.StatusBadGateway}, time.Second},
		{limiter.Observation{Failed: true}, 2 * time.Second},
	}
	for _, step := range steps {
		step.o.Sent = time.Now()
		added, err := first.Observe(ctx, r, step.o)
		require.NoError(t, err)
		require.Positive(t, added)

		mine, err := first.State(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, limiter.Reason("errors"), mine.PauseReason)
		assert.InDelta(t, step.want, mine.Paused, float64(100*time.Millisecond), "%+v doubles the step", step.o)
		theirs, err := second.State(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, limiter.Reason("shared"), theirs.PauseReason, "the other worker heard of it through Redis")
		assert.Greater(t, theirs.Wait, step.want-500*time.Millisecond, "the other worker waits the backoff out")
		assert.LessOrEqual(t, theirs.Wait, step.want+5*time.Millisecond)
	}
}
