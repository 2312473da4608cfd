package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestFetchRedisDownLogsOneLine: while Redis does not answer, stderr holds
// the Limiter's one warning, not go-redis's own lines (a failed dial, a
// few a second), which show with -v only.
func TestFetchRedisDownLogsOneLine(t *testing.T) {
	s := newSite(t, nil)
	args := []string{"fetch", "-rate", "10", "-burst", "1", "-redis", "redis://" + freeAddr(t) + "/0?max_retries=0"}
	for i := range 10 {
		args = append(args, fmt.Sprintf("%s/%d", s.URL, i))
	}
	o := runPolite(t, "", args...)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	about := 0
	for line := range strings.Lines(o.stderr) {
		if strings.Contains(strings.ToLower(line), "redis") {
			about++
		}
	}
	assert.Equal(t, 1, about, "one line about Redis: %s", o.stderr)

	o = runPolite(t, "", append([]string{args[0], "-v"}, args[1:]...)...)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "go-redis: ", "go-redis's own lines with -v")
}

// TestFetchRedisBackLogged: without -v, when stderr says that Redis went
// away, it also says that Redis came back.
func TestFetchRedisBackLogged(t *testing.T) {
	r := redistest.Start(t)
	s := newSite(t, nil)
	args := []string{"fetch", "-rate", "5", "-burst", "1", "-redis", "redis://" + r.Addr() + "/0?max_retries=0"}
	for i := range 40 {
		args = append(args, fmt.Sprintf("%s/%d", s.URL, i))
	}
	done := make(chan outcome, 1)
	go func() {
		o, err := runBinary("", args...)
		assert.NoError(t, err)
		done <- o
	}()
	sent := func(n int) func() bool { return func() bool { return len(s.arrivalTimes()) >= n } }
	require.Eventually(t, sent(3), time.Minute, 10*time.Millisecond)
	r.Kill()
	require.Eventually(t, sent(8), time.Minute, 10*time.Millisecond)
	r.Restart()
	o := <-done
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "redis unavailable", "Redis going away")
	assert.Contains(t, o.stderr, "redis answers again", "Redis coming back, without -v")
	assert.NotContains(t, o.stderr, "go-redis: ", "go-redis's own lines only with -v")
}
