package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFetchStdinBadLinesFailAlone: every unusable line of the URL list
// (two URLs on a line, a line too long, a bad URL) fails alone, naming its
// line, and the run goes on: exit 1 at the end.
func TestFetchStdinBadLinesFailAlone(t *testing.T) {
	s := newSite(t, nil)
	list := strings.Join([]string{
		s.URL + "/1",
		"",
		"not a url",
		"# a comment",
		strings.Repeat("x", 70<<10),
		"ftp://a.test/",
		s.URL + "/2",
	}, "\n")
	o := runPolite(t, list, "fetch", "-rate", "100")
	assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
	assert.Len(t, s.requests(), 2, "the good lines were fetched")
	assert.Contains(t, o.stderr, `FAIL line 3: more than one URL ("not", then "a url"): give one URL per line`)
	assert.Contains(t, o.stderr, "FAIL line 5: longer than 64 KiB")
	assert.Contains(t, o.stderr, `FAIL line 6: bad URL "ftp://a.test/": scheme "ftp" is not http or https`)
	assert.Contains(t, o.stderr, "5 URLs in")
	assert.Contains(t, o.stderr, "2 fetched, 3 failed")
	assert.Less(t, len(o.stderr), 4<<10, "no line quotes much of its input")
}

// TestFetchStreamsItsList is issue 39's list of a million URLs: the list
// is read as the crawl goes, so the first request goes out as soon as the
// first line comes (it went after the whole list was read: 11-13 s for a
// million), and the process holds only so many URLs ahead (maxAhead) of
// those done: the writer of a long list is held back, and the memory
// stays bounded (it grew by 1.9 KB per URL, 1.87 GB for a million).
func TestFetchStreamsItsList(t *testing.T) {
	s := newSite(t, nil)
	cmd := exec.Command(binary, "fetch", "-rate", "0.001", "-burst", "1", "-max-wait", "0")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()

	start := time.Now()
	_, err = fmt.Fprintf(stdin, "%s/0\n", s.URL)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(s.requests()) == 1 }, 10*time.Second, 5*time.Millisecond,
		"the first line's request before the list ends; stderr: %s", &stderr)
	t.Logf("the first request %v after the first line", time.Since(start).Round(time.Millisecond))

	// A million more lines of the same host: its pace holds them all back.
	var written atomic.Int64
	go func() {
		w := bufio.NewWriter(stdin)
		for i := 1; i <= 1_000_000; i++ {
			if _, err := fmt.Fprintf(w, "%s/%d\n", s.URL, i); err != nil {
				return
			}
			written.Add(1)
		}
		w.Flush()
		stdin.Close()
	}()
	// Wait until the writer is held back: no line taken for a while.
	for last := int64(-1); ; {
		time.Sleep(time.Second)
		n := written.Load()
		if n == last || n == 1_000_000 {
			break
		}
		last = n
	}
	n := written.Load()
	peak := peakRSS(t, cmd.Process.Pid)
	t.Logf("the list's writer held back after %d lines; the process's peak RSS %d MB", n, peak>>20)
	assert.Less(t, n, int64(200_000), "the list is read as the crawl goes, not whole")
	assert.Less(t, peak, int64(256<<20), "memory bounded by the URLs held ahead, not by the list")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
}

// peakRSS is the peak resident set size of process pid, from /proc.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestFetchLongBadLineQuotesLittle is issue 39's 30 KB line holding a
// space: its error line quotes about maxQuoted bytes of it (it was one
// stderr line of 90,125 bytes), and the run goes on.
func TestFetchLongBadLineQuotesLittle(t *testing.T) {
	s := newSite(t, nil)
	long := s.URL + "/" + strings.Repeat("x", 15<<10)
	o := runPolite(t, s.URL+"/1\n"+long+" "+long+"\n", "fetch", "-rate", "100")
	assert.Equal(t, exitFailed, o.code, "stderr: %.1000s", o.stderr)
	assert.Len(t, s.requests(), 1)
	for _, line := range lines(o.stderr) {
		assert.Less(t, len(line), 3*maxQuoted, "%.1000s", line)
	}
}
