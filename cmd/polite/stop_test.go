package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFetchStopSignalKeepsTheTurn stops a real polite fetch -state with
// each stop signal while its second URL waits for its turn (1 request per
// 4 s), then runs it again on the same state: the new run's request goes
// no sooner than the first run's pace allows, the stopped run printed its
// table and one line for what it did not start, and exited with 128 plus
// the signal's number.
func TestFetchStopSignalKeepsTheTurn(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			s := newSite(t, nil)
			state := filepath.Join(t.TempDir(), "state")
			flags := []string{"fetch", "-state", state, "-rate", "0.25", "-burst", "1"}
			first := exec.Command(binary, append(flags, s.URL+"/a", s.URL+"/b")...)
			var stdout, stderr bytes.Buffer
			first.Stdout, first.Stderr = &stdout, &stderr
			require.NoError(t, first.Start())
			require.Eventually(t, func() bool { return len(s.requests()) == 1 }, 30*time.Second, 10*time.Millisecond, "/a never came")
			time.Sleep(time.Second) // /b now waits for its turn
			require.NoError(t, first.Process.Signal(sig))
			err := first.Wait()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v; stderr: %s", err, stderr.String())
			assert.Equal(t, 128+int(sig), exit.ExitCode(), "stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), "1 fetched, 0 failed, 1 not started (stopped)")
			assert.NotContains(t, stderr.String(), "FAIL", "what was not started is one line, not one per URL")
			assert.Contains(t, stdout.String(), "127.0.0.1", "the table is printed")

			o := runPolite(t, "", append(flags, s.URL+"/c")...)
			require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
			paths, arrivals := s.requests(), s.arrivalTimes()
			require.Equal(t, []string{"/a", "/c"}, paths, "/b was never sent")
			gap := arrivals[1].Sub(arrivals[0])
			t.Logf("after %v: /c came %v after /a (the pace: 4s)", sig, gap.Round(time.Millisecond))
			assert.GreaterOrEqual(t, gap, 3900*time.Millisecond, "the turn taken before the signal held across the restart")
		})
	}
}

// TestFetchStopLetsARequestInFlightEnd stops polite fetch while a
// response is slow: the response still comes (within the grace period),
// its URL is fetched, and the run exits as stopped.
func TestFetchStopLetsARequestInFlightEnd(t *testing.T) {
	s := startSite(t, &site{delay: 1500 * time.Millisecond})
	cmd := exec.Command(binary, "fetch", "-rate", "0.25", s.URL+"/slow", s.URL+"/next")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return len(s.requests()) == 1 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v; stderr: %s", err, stderr.String())
	assert.Equal(t, 143, exit.ExitCode())
	assert.Contains(t, stderr.String(), "200 "+s.URL+"/slow", "the request in flight ended with its response")
	assert.Contains(t, stderr.String(), "1 fetched, 0 failed, 1 not started (stopped)")
}

// TestFetchStateNotWrittenIsAnError runs polite fetch -state where the
// state cannot be written (a file size limit of 64 blocks, room for a new
// state but not for 800 domains, as a full disk would do): the run says so
// and does not exit 0.
func TestFetchStateNotWrittenIsAnError(t *testing.T) {
	port := serveLoopback(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	state := filepath.Join(t.TempDir(), "state")
	var urls []string
	for i := range 800 { // 800 domains, each with a turn 100 s ahead: more than 64 blocks of state
		urls = append(urls, fmt.Sprintf("http://127.0.%d.%d:%d/", 1+i/200, 1+i%200, port))
	}
	script := fmt.Sprintf("ulimit -f 64 && exec %s fetch -state %s -rate 0.01 -concurrency 16 %s",
		quote(binary), quote(state), strings.Join(urls, " "))
	cmd := exec.Command("sh", "-c", script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "exit 0 although the state could not be written; stderr: %s", stderr.String())
	assert.Equal(t, exitFailed, exit.ExitCode(), "stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "800 fetched, 0 failed", "every URL was fetched: the state alone failed")
	assert.Contains(t, stderr.String(), "-state: the state could not be written")
	assert.Contains(t, stderr.String(), "file too large")
}
