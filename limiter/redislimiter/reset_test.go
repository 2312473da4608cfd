package redislimiter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/redistest"
	"github.com/polite-go/polite/limiter"
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
			l, _ := newTestLimiter(t, srv, Options{})
			rule := limiter.Rule{Rate: 1, Burst: 1, Quotas: []config.Quota{{Requests: 100, Window: time.Minute}}}
			req := limiter.Request{Key: "reset.example", Rule: &rule}
			reserve := func() (*limiter.Reservation, int64) {
				t.Helper()
				res, err := l.Reserve(ctx, req)
				require.NoError(t, err)
				require.True(t, res.OK)
				require.False(t, res.Degraded)
				return &res, res.Turn.(*turn).start
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
