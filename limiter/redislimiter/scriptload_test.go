package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
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

// TestColdStartIsNoOutage: New loads the library and the scripts before
// any request needs them; after FUNCTION FLUSH, and after SCRIPT FLUSH
// where the scripts run by hash, 50 concurrent reservations each find
// what they run missing, load it outside the timeout, and go through
// Redis: no outage, no warning.
func TestColdStartIsNoOutage(t *testing.T) {
	srv := redistest.Start(t)
	admin := newClient(t, srv)
	logs := &logRecorder{}
	// A timeout short enough that 50 loads of the scripts at once would
	// exceed it on a loaded machine, long enough for the calls after them.
	l, err := New(newClient(t, srv), WithLogger(slog.New(logs)), WithTimeout(300*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.Eventually(t, func() bool { return scriptsLoaded(t, l, admin) }, 5*time.Second, 10*time.Millisecond, "New loads the scripts")

	require.Eventually(t, l.functions.Load, 5*time.Second, 10*time.Millisecond, "New loads the library")

	ctx := context.Background()
	for round := range 3 {
		switch round {
		case 0: // the library gone: each call loads it again
			require.NoError(t, admin.FunctionFlush(ctx).Err())
		case 1: // the library and the scripts gone, functions refused: each call loads its script
			require.NoError(t, admin.FunctionFlush(ctx).Err())
			require.NoError(t, admin.ScriptFlush(ctx).Err())
			l.functions.Store(false)
		case 2:
			require.NoError(t, admin.ScriptFlush(ctx).Err())
		}
		var wg sync.WaitGroup
		for d := range 50 {
			wg.Go(func() {
				req := limiter.Request{Key: fmt.Sprintf("cold%d-%d.example", round, d), Rule: &limiter.Rule{Rate: 5, Burst: 1}}
				res, err := l.Reserve(ctx, req)
				if assert.NoError(t, err) {
					assert.False(t, res.Degraded(), "paced through Redis")
				}
			})
		}
		wg.Wait()
	}
	assert.False(t, l.down())
	assert.Zero(t, logs.count(downLog), "a cold start is not an outage")
}

// TestClusterScriptsOnEveryNode: on a Cluster, New loads the scripts into
// every node, and the library into every primary, whose replicas copy it,
// so that a promoted replica has them.
func TestClusterScriptsOnEveryNode(t *testing.T) {
	c := redistest.StartCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { client.Close() })
	l, err := New(client)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	library := strings.TrimPrefix(strings.SplitN(l.scripts.library, "\n", 2)[0], "#!lua name=")
	for _, node := range c.Nodes {
		admin := newClient(t, node)
		require.Eventually(t, func() bool { return scriptsLoaded(t, l, admin) }, 10*time.Second, 10*time.Millisecond, "scripts on %s", node.Addr())
		require.Eventually(t, func() bool {
			libs, err := admin.FunctionList(context.Background(), redis.FunctionListQuery{LibraryNamePattern: library}).Result()
			return err == nil && len(libs) == 1
		}, 10*time.Second, 10*time.Millisecond, "library on %s", node.Addr())
	}
}

// TestScriptsWithoutFunctionRights: a Redis user who may run scripts but
// not load functions (ACL) gets the scripts run by hash, through Redis.
func TestScriptsWithoutFunctionRights(t *testing.T) {
	srv := redistest.Start(t)
	admin := newClient(t, srv)
	ctx := context.Background()
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "worker", "on", ">secret", "~*", "+@all", "-function").Err())
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: "worker", Password: "secret"})
	t.Cleanup(func() { client.Close() })
	logs := &logRecorder{}
	l, err := New(client, WithLogger(slog.New(logs)))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.Eventually(t, func() bool { return scriptsLoaded(t, l, admin) }, 5*time.Second, 10*time.Millisecond, "New loads the scripts")
	assert.False(t, l.functions.Load(), "no library")
	res, err := l.Reserve(ctx, limiter.Request{Key: "acl.example", Rule: &limiter.Rule{Rate: 5, Burst: 1}})
	require.NoError(t, err)
	assert.False(t, res.Degraded(), "paced through Redis")
	assert.Zero(t, logs.count(downLog))
}
