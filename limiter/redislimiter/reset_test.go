package redislimiter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestResetDoesNotReuseReservations: after Redis loses a domain's state
// (FLUSHALL, a restart without persistence, the key evicted), the
// reservations made before cannot be given back into the new state. Before,
// IDs started again at 1, so that a stale Cancel undid the new latest turn
// and the next request took its start: two requests at once.
func TestResetDoesNotReuseReservations(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		reset func(t *testing.T, l *Limiter, key string)
	}{
		{"FLUSHALL", func(t *testing.T, l *Limiter, _ string) {
			require.NoError(t, l.client.FlushAll(ctx).Err())
		}},
		{"key evicted", func(t *testing.T, l *Limiter, key string) {
			require.NoError(t, l.client.Del(ctx, l.keys(key)...).Err())
		}},
		{"restart without persistence", func(t *testing.T, l *Limiter, _ string) {
			srv.Kill()
			srv.Restart()
			require.Eventually(t, func() bool { return l.client.Ping(ctx).Err() == nil }, 5*time.Second, 10*time.Millisecond)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := newTestLimiter(t, srv)
			rule := limiter.Rule{Rate: 1, Burst: 1, Quotas: []config.Quota{{Requests: 100, Window: time.Minute}}}
			req := limiter.Request{Key: "reset.example", Rule: &rule}
			reserve := func() (*limiter.Reservation, int64) {
				t.Helper()
				res, err := l.Reserve(ctx, req)
				require.NoError(t, err)
				require.True(t, res.OK())
				require.False(t, res.Degraded())
				return &res, res.Turn().(*turn).start
			}
			staleOlder, _ := reserve()
			staleLatest, _ := reserve()
			tt.reset(t, l, req.Key)
			_, first := reserve()
			_, latest := reserve()
			require.Equal(t, int64(time.Second/time.Microsecond), latest-first, "a fresh state, paced again")

			require.NoError(t, staleLatest.Cancel(ctx))
			require.NoError(t, staleOlder.Cancel(ctx))
			require.False(t, l.down())

			_, next := reserve()
			assert.GreaterOrEqual(t, next-latest, int64(time.Second/time.Microsecond),
				"the stale cancels freed none of the new turns: the next request goes a second after the latest")
			st, err := l.State(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, 97, st.Quotas[0].Remaining, "the new turns keep their quota slots")
		})
	}
}

// TestLastStartCountsWhereRedisHasNoState: a domain whose state Redis no
// longer holds (it expired once it had recovered, or Redis lost it) counts
// the caller's latest start, so that a stricter rule keeps its gap from
// it, in State and in Reserve; a State writes nothing.
func TestLastStartCountsWhereRedisHasNoState(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	l, _ := newTestLimiter(t, srv)
	loose := limiter.Rule{MinDelay: time.Second}
	strict := limiter.Rule{MinDelay: time.Minute, Quotas: []config.Quota{{Requests: 2, Window: time.Hour}}}
	const key = "idle.example"
	res, err := l.Reserve(ctx, limiter.Request{Key: key, Rule: &loose})
	require.NoError(t, err)
	require.Zero(t, res.Wait())
	last := time.Now()
	require.NoError(t, l.client.Del(ctx, l.keys(key)...).Err(), "as its expiry does once it has recovered")

	r := limiter.Request{Key: key, Rule: &strict, LastStart: last}
	st, err := l.State(ctx, r)
	require.NoError(t, err)
	assert.InDelta(t, time.Minute, st.Wait, float64(time.Second))
	assert.Equal(t, limiter.ReasonMinDelay, st.Reason)
	require.Len(t, st.Quotas, 1)
	assert.Equal(t, 1, st.Quotas[0].Remaining, "the last start counts in the quota")
	n, err := l.client.Exists(ctx, l.keys(key)...).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "State wrote nothing")

	res, err = l.Reserve(ctx, r)
	require.NoError(t, err)
	require.True(t, res.OK())
	assert.InDelta(t, time.Minute, res.Wait(), float64(time.Second))
	assert.Equal(t, limiter.ReasonMinDelay, res.Reason())
	st, err = l.State(ctx, limiter.Request{Key: key, Rule: &strict})
	require.NoError(t, err)
	assert.Zero(t, st.Quotas[0].Remaining, "Redis holds the last start and the turn")
}
