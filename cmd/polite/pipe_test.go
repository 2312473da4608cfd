package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFetchStdoutClosedPipeKeepsTheState is issue 39's `polite fetch
// -state s.db -rate 0.5 URL | true`: stdout is a pipe whose reader has
// gone, so printing the table meets SIGPIPE. The state must be written
// all the same, and the process end by itself (exit 141, as a run stopped
// by SIGPIPE), so that a second run on the same file keeps the gap. Before
// the fix the process died of SIGPIPE printing the table, before it wrote
// the state, and the second request came 8–15 ms after the first.
func TestFetchStdoutClosedPipeKeepsTheState(t *testing.T) {
	s := newSite(t, nil)
	state := filepath.Join(t.TempDir(), "state")
	flags := []string{"fetch", "-state", state, "-rate", "0.5", "-burst", "1"}

	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close()) // as `| true` does, at once
	first := exec.Command(binary, append(flags, s.URL+"/1")...)
	first.Stdout = w
	var stderr strings.Builder
	first.Stderr = &stderr
	err = first.Run()
	w.Close()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
	status := exit.Sys().(syscall.WaitStatus)
	require.False(t, status.Signaled(), "the process was killed by %v; stderr: %s", status.Signal(), stderr.String())
	assert.Equal(t, 128+int(syscall.SIGPIPE), exit.ExitCode(), "stderr: %s", stderr.String())
	require.Len(t, s.requests(), 1)

	o := runPolite(t, "", append(flags, s.URL+"/2")...)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	arrivals := s.arrivalTimes()
	require.Len(t, arrivals, 2)
	gap := arrivals[1].Sub(arrivals[0])
	t.Logf("the second run's request came %v after the first run's", gap.Round(time.Millisecond))
	assert.GreaterOrEqual(t, gap, 1900*time.Millisecond, "the pace of 0.5/s held across the runs")
}
