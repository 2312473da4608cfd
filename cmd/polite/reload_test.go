package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReloadOnHangup: SIGHUP puts the -config file's new limits in force,
// -rate over its default, and says what changed; a broken file changes
// nothing and says why.
func TestReloadOnHangup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "limits.json")
	write := func(s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o600)) }
	write(`{"domains": {"a.test": {"min_delay": "1s"}}}`)
	f := &fetchFlags{config: path, rate: 5, set: map[string]bool{"rate": true}}
	opts, err := f.options(config.Load)
	require.NoError(t, err)
	tr, err := polite.NewTransport(nil, opts...)
	require.NoError(t, err)
	var stderr syncBuffer
	ctx, stopSignals := notifyStop(context.Background())
	defer stopSignals()
	stop := reloadOnHangup(tr, f, config.Load, &stderr)
	defer stop()

	write(`{"domains": {"b.test": {"min_delay": "2s"}, "*.blogspot.com": {"min_delay": "3s"}}, "global_config": {"requests_per_second": 20, "burst_capacity": 20}}`)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Count(stderr.String(), "\n") >= 4 }, 5*time.Second, 10*time.Millisecond, "stderr: %s", &stderr)
	assert.Equal(t, 2*time.Second, tr.Limit("b.test").MinDelay)
	assert.Equal(t, 3*time.Second, tr.Limit("x.blogspot.com").MinDelay)
	assert.Equal(t, config.Limit{RequestsPerSecond: 5, Burst: 1}, tr.Limit("a.test"), "-rate still sets the default")
	global, ok := tr.GlobalLimit()
	assert.True(t, ok)
	assert.Equal(t, 20.0, global.RequestsPerSecond)
	out := stderr.String()
	assert.Contains(t, out, "a.test removed")
	assert.Contains(t, out, `b.test now {`)
	assert.Contains(t, out, "*.blogspot.com now")
	assert.Contains(t, out, "global_config now")
	assert.NotContains(t, out, "default_config", "the default did not change")

	write(`{"domains": {"b.test": {"min_delay": "-2s"}}}`)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "the limits in force stay") }, 5*time.Second, 10*time.Millisecond)
	assert.Contains(t, stderr.String(), `domain "b.test": min_delay`)
	assert.Equal(t, 2*time.Second, tr.Limit("b.test").MinDelay, "a broken file changes nothing")
	assert.NoError(t, ctx.Err(), "SIGHUP reloads, and does not stop the run")
}
