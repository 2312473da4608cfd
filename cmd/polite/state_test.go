package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFetchStateSurvivesSIGKILL kills polite fetch -state mid-crawl with
// SIGKILL and starts it again on the same file: the site sees the same
// pace across the restart. Domain a (127.0.0.1) goes at 1 request per 10
// s; domain b (127.0.0.2) answers its first request with a 429 and
// Retry-After: 12. The process dies once its state was committed (about
// every second); the restarted one must still wait for a's turn and b's
// pause.
func TestFetchStateSurvivesSIGKILL(t *testing.T) {
	var mu sync.Mutex
	arrivals := map[string]time.Time{}
	site := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals[r.URL.Path] = time.Now()
		mu.Unlock()
		if r.URL.Path == "/b/1" {
			w.Header().Set("Retry-After", "12")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	site.Listener = ln
	site.Start()
	defer site.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	url := func(host, path string) string { return fmt.Sprintf("http://%s:%d%s", host, port, path) }
	state := filepath.Join(t.TempDir(), "state")
	flags := []string{"fetch", "-state", state, "-rate", "0.1", "-burst", "1", "-timeout", "0", "-json"}

	first := exec.Command(binary, append(flags, url("127.0.0.1", "/a/1"), url("127.0.0.1", "/a/2"),
		url("127.0.0.2", "/b/1"), url("127.0.0.2", "/b/2"))...)
	var stderr strings.Builder
	first.Stderr = &stderr
	require.NoError(t, first.Start())
	// Kill it once it has committed its state with both domains in it
	// (about every second), however slowly a loaded machine runs it. The
	// store keeps each key's bytes as they are.
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(state)
		return err == nil && strings.Contains(string(data), "127.0.0.1") && strings.Contains(string(data), "127.0.0.2")
	}, 30*time.Second, 50*time.Millisecond, "the state file never held both domains; stderr: %s", &stderr)
	require.NoError(t, first.Process.Kill()) // SIGKILL: no chance to write the state again
	_ = first.Wait()
	mu.Lock()
	require.Contains(t, arrivals, "/a/1", "stderr: %s", stderr.String())
	require.Contains(t, arrivals, "/b/1")
	require.NotContains(t, arrivals, "/a/2", "a's second turn comes at 10 s")
	mu.Unlock()

	o := runPolite(t, "", append(flags, url("127.0.0.1", "/a/3"), url("127.0.0.2", "/b/3"))...)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("after the restart: a's next request %v after its first, b's %v after its 429",
		arrivals["/a/3"].Sub(arrivals["/a/1"]).Round(time.Millisecond), arrivals["/b/3"].Sub(arrivals["/b/1"]).Round(time.Millisecond))
	assert.GreaterOrEqual(t, arrivals["/a/3"].Sub(arrivals["/a/1"]), 9500*time.Millisecond, "a's pace held across the restart")
	assert.GreaterOrEqual(t, arrivals["/b/3"].Sub(arrivals["/b/1"]), 11500*time.Millisecond, "b's pause held across the restart")
}

// A second polite fetch on a state another one is using exits 2 with an
// error naming the file, and sends nothing.
func TestFetchRefusesAStateInUse(t *testing.T) {
	var requests atomic.Int64
	port := serveLoopback(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	url := func(host, path string) string { return fmt.Sprintf("http://%s:%d%s", host, port, path) }
	state := filepath.Join(t.TempDir(), "state")
	first := exec.Command(binary, "fetch", "-state", state, "-rate", "0.1", "-burst", "1", "-timeout", "0",
		url("127.0.0.1", "/1"), url("127.0.0.1", "/2"))
	require.NoError(t, first.Start())
	defer func() {
		first.Process.Kill()
		first.Wait()
	}()
	require.Eventually(t, func() bool { return requests.Load() == 1 }, 30*time.Second, 10*time.Millisecond)

	o := runPolite(t, "", "fetch", "-state", state, url("127.0.0.2", "/3"))
	assert.Equal(t, exitUsage, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, state, "the error names the file")
	assert.Contains(t, o.stderr, "another process")
	assert.Equal(t, int64(1), requests.Load(), "the second process sent nothing")
}
