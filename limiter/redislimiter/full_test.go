package redislimiter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/internal/redistest"
	"github.com/polite-go/polite/limiter"
)

// TestFullRedisIsOneOutage: a Redis at maxmemory with noeviction refuses
// the scripts' writes (OOM) but still answers PING. The Limiter's outage
// lasts until its own call, a reservation, works again: one warning, no
// recovery while Redis is full, then one recovery. Before, the probe took
// each PING for a recovery, and the next request failed again: a line
// every probe interval.
func TestFullRedisIsOneOutage(t *testing.T) {
	srv := redistest.Start(t)
	// Probing every 50ms; with a timeout a loaded machine does not reach,
	// so that only the refused writes make the outage.
	l, logs := newTestLimiter(t, srv, Options{Timeout: 5 * time.Second})
	admin := newClient(t, srv)
	ctx := context.Background()
	req := limiter.Request{Key: "full.example", Rule: &limiter.Rule{Rate: 100, Burst: 1}}
	res, err := l.Reserve(ctx, req)
	require.NoError(t, err)
	require.False(t, res.Degraded)

	require.NoError(t, admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "1").Err())
	require.NoError(t, admin.Ping(ctx).Err(), "a full Redis answers PING")
	require.ErrorContains(t, admin.Set(ctx, "filler", "x", 0).Err(), "OOM", "and refuses writes")

	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		res, err = l.Reserve(ctx, req)
		require.NoError(t, err)
		assert.True(t, res.Degraded)
	}
	assert.Equal(t, 1, logs.count(downLog), "one outage, logged once")
	assert.Zero(t, logs.count(upLog), "no recovery while Redis refuses the Limiter's writes")
	assert.True(t, l.down())

	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())
	eventuallyShared(t, l)
	for range 3 {
		res, err = l.Reserve(ctx, req)
		require.NoError(t, err)
		assert.False(t, res.Degraded)
	}
	assert.Equal(t, 1, logs.count(downLog))
	recoveryLogged(t, logs)
}
