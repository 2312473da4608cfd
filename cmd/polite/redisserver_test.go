package main

import (
	"context"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// startRedis starts a redis-server from PATH on a free loopback port,
// without persistence, killed when the test ends, and returns its
// host:port. A missing redis-server fails the test. (The command's module
// keeps its own helper rather than import the root module's internal
// one.)
func startRedis(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	require.NoError(t, err, "the tests against a real Redis need redis-server on PATH")
	addr := freeAddr(t)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	cmd := exec.Command(path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		return client.Ping(ctx).Err() == nil
	}, 10*time.Second, 20*time.Millisecond, "redis-server did not answer on %s", addr)
	return addr
}
