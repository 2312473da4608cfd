package redislimiter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestFullRedisIsOneOutage: a Redis at maxmemory with noeviction refuses
// the scripts' writes (OOM) but still answers PING. The Limiter's outage
// lasts until its own call, a reservation, works again and the shared
// pace then holds for a second: one warning, no recovery while Redis is
// full or on its edge, then one recovery. Before, the probe took each
// PING for a recovery, and the next request failed again: a line every
// probe interval.
func TestFullRedisIsOneOutage(t *testing.T) {
	srv := redistest.Start(t)
	// Probing every 50ms; with a timeout a loaded machine does not reach,
	// so that only the refused writes make the outage.
	l, logs := newTestLimiter(t, srv, WithTimeout(5*time.Second))
	admin := newClient(t, srv)
	ctx := context.Background()
	req := limiter.Request{Key: "full.example", Rule: &limiter.Rule{Rate: 100, Burst: 1}}
	res, err := l.Reserve(ctx, req)
	require.NoError(t, err)
	require.False(t, res.Degraded())

	require.NoError(t, admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "1").Err())
	require.NoError(t, admin.Ping(ctx).Err(), "a full Redis answers PING")
	require.ErrorContains(t, admin.Set(ctx, "filler", "x", 0).Err(), "OOM", "and refuses writes")

	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		res, err = l.Reserve(ctx, req)
		require.NoError(t, err)
		assert.True(t, res.Degraded())
	}
	assert.Equal(t, 1, logs.count(downLog), "one outage, logged once")
	assert.Zero(t, logs.count(upLog), "no recovery while Redis refuses the Limiter's writes")
	assert.True(t, l.down())

	// At the edge of full, Redis takes one write and refuses the next, as
	// its used memory moves with expiries and client buffers: a probe gets
	// through, then the requests' writes fail again. That is still the
	// one outage, with no recovery logged; before, each probe that got
	// through logged a recovery and the next request a warning.
	reserveFor := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			_, err = l.Reserve(ctx, req)
			require.NoError(t, err)
		}
	}
	for range 4 {
		require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())
		eventuallyShared(t, l)
		reserveFor(250 * time.Millisecond) // five probe intervals, a quarter of steady
		require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "1").Err())
		reserveFor(250 * time.Millisecond)
		assert.True(t, l.down())
	}
	assert.Equal(t, 1, logs.count(downLog), "one outage, logged once")
	assert.Zero(t, logs.count(upLog), "no recovery while Redis refuses writes on and off")

	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())
	eventuallyShared(t, l)
	for range 3 {
		res, err = l.Reserve(ctx, req)
		require.NoError(t, err)
		assert.False(t, res.Degraded())
	}
	assert.Equal(t, 1, logs.count(downLog))
	recoveryLogged(t, logs)
}
