package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/internal/redistest"
	"github.com/polite-go/polite/limiter"
)

// scriptsLoaded reports whether every script of l is in the script cache
// of the Redis that client reaches.
func scriptsLoaded(t *testing.T, l *Limiter, client *redis.Client) bool {
	t.Helper()
	var hashes []string
	for _, s := range l.scripts.all() {
		hashes = append(hashes, s.eval.Hash())
	}
	exist, err := client.ScriptExists(context.Background(), hashes...).Result()
	if err != nil {
		return false
	}
	for _, e := range exist {
		if !e {
			return false
		}
	}
	return true
}

// TestColdStartIsNoOutage: New loads the scripts before any request needs
// them; after SCRIPT FLUSH, 50 concurrent reservations each find a script
// missing, load it outside the timeout, and go through Redis: no outage,
// no warning.
func TestColdStartIsNoOutage(t *testing.T) {
	srv := redistest.Start(t)
	admin := newClient(t, srv)
	logs := &logRecorder{}
	// A timeout short enough that 50 loads of the scripts at once would
	// exceed it on a loaded machine, long enough for the calls after them.
	l, err := New(newClient(t, srv), Options{Logger: slog.New(logs), Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.Eventually(t, func() bool { return scriptsLoaded(t, l, admin) }, 5*time.Second, 10*time.Millisecond, "New loads the scripts")

	ctx := context.Background()
	for round := range 2 {
		require.NoError(t, admin.ScriptFlush(ctx).Err())
		var wg sync.WaitGroup
		for d := range 50 {
			wg.Go(func() {
				req := limiter.Request{Key: fmt.Sprintf("cold%d-%d.example", round, d), Rule: &limiter.Rule{Rate: 5, Burst: 1}}
				res, err := l.Reserve(ctx, req)
				if assert.NoError(t, err) {
					assert.False(t, res.Degraded, "paced through Redis")
				}
			})
		}
		wg.Wait()
	}
	assert.False(t, l.down())
	assert.Zero(t, logs.count(downLog), "a cold start is not an outage")
}

// TestClusterScriptsOnEveryNode: on a Cluster, New loads the scripts into
// every node, replicas included, so that a promoted replica has them.
func TestClusterScriptsOnEveryNode(t *testing.T) {
	c := redistest.StartCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { client.Close() })
	l, err := New(client, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	for _, node := range c.Nodes {
		admin := newClient(t, node)
		require.Eventually(t, func() bool { return scriptsLoaded(t, l, admin) }, 10*time.Second, 10*time.Millisecond, "scripts on %s", node.Addr())
	}
}
