package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// arrival is one request a test site saw.
type arrival struct {
	host, path string
	status     int
	at         time.Time
}

// TestFetchRetriesAfterPauses is the crawl an operator must be able to
// trust: on one loopback site, 127.0.0.1 throttles (a 429 with
// Retry-After: 1 to each page's first request), 127.0.0.2 struggles (a
// 502 to each page's first two requests) and 127.0.0.3's robots.txt
// answers 503 at first, which disallows the host for a minute (its other
// URLs wait in line meanwhile). Every URL ends fetched, each after its
// pause; the table's figures are what the
// server saw; no password appears in any output, the -v log included.
func TestFetchRetriesAfterPauses(t *testing.T) {
	if testing.Short() {
		t.Skip("waits a minute for robots.txt to be fetched again; skipped with -short")
	}
	t.Parallel()
	var (
		mu     sync.Mutex
		seen   []arrival
		counts = map[string]int{}
	)
	port := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		mu.Lock()
		counts[host+r.URL.Path]++
		n := counts[host+r.URL.Path]
		status := http.StatusOK
		switch {
		case r.URL.Path == "/robots.txt" && host == "127.0.0.3" && n == 1:
			status = http.StatusServiceUnavailable
		case r.URL.Path == "/robots.txt" && host != "127.0.0.3":
			status = http.StatusNotFound
		case host == "127.0.0.1" && n == 1:
			status = http.StatusTooManyRequests
			w.Header().Set("Retry-After", "1")
		case host == "127.0.0.2" && n <= 2:
			status = http.StatusBadGateway
		}
		seen = append(seen, arrival{host, r.URL.Path, status, time.Now()})
		mu.Unlock()
		w.WriteHeader(status)
		if r.URL.Path == "/robots.txt" && status == http.StatusOK {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		}
	}))

	args := []string{"fetch", "-v", "-robots", "testbot", "-rate", "4", "-burst", "1", "-concurrency", "4"}
	for host, prefix := range map[string]string{"127.0.0.1": "t", "127.0.0.2": "s", "127.0.0.3": "r"} {
		for i := 1; i <= 3; i++ {
			args = append(args, fmt.Sprintf("http://alice:PW-secret-%d@%s:%d/%s/%d", i, host, port, prefix, i))
		}
	}
	o := runPoliteWithin(t, 3*time.Minute, "", args...)
	t.Logf("stderr:\n%s\nstdout:\n%s", o.stderr, o.stdout)
	require.Equal(t, exitOK, o.code)
	assert.Contains(t, o.stderr, "9 URLs in")
	// 127.0.0.3's first URL waits for robots.txt to be fetched again; the
	// frontier holds the host's other URLs until then.
	assert.Contains(t, o.stderr, "9 fetched (7 after retries), 0 failed")
	for _, out := range []string{o.stdout, o.stderr} {
		assert.NotContains(t, out, "PW-secret")
	}
	assert.Contains(t, o.stderr, "alice:xxxxx@127.0.0.1", "URLs are printed redacted")

	mu.Lock()
	defer mu.Unlock()
	byHost := map[string][]arrival{}
	for _, a := range seen {
		byHost[a.host] = append(byHost[a.host], a)
	}
	// Every page was fetched, and after its pause.
	for host, list := range byHost {
		var lastPause time.Time
		ok := map[string]bool{}
		for _, a := range list {
			assert.False(t, a.at.Before(lastPause), "%s%s came %v before the pause ended", host, a.path, lastPause.Sub(a.at))
			if a.status == http.StatusTooManyRequests {
				lastPause = a.at.Add(time.Second)
			}
			if a.status == http.StatusOK && a.path != "/robots.txt" {
				ok[a.path] = true
			}
		}
		assert.Len(t, ok, 3, "%s: every page answered 200", host)
	}
	robots := byHost["127.0.0.3"]
	require.NotEmpty(t, robots)
	require.Equal(t, "/robots.txt", robots[0].path)
	for _, a := range robots[1:] {
		assert.GreaterOrEqual(t, a.at.Sub(robots[0].at), time.Minute, "%s went only after robots.txt was fetched again", a.path)
	}

	// The table says what the server saw.
	rows := map[string][]string{}
	for _, line := range lines(o.stdout)[1:] {
		fields := strings.Fields(line)
		rows[fields[0]] = fields
	}
	for host, want := range map[string]struct {
		retries, errors int
		responses       string
	}{
		"127.0.0.1": {3, 0, "2xx:3 4xx:3"},
		"127.0.0.2": {6, 0, "2xx:3 5xx:6"},
		"127.0.0.3": {1, 1, "2xx:3"},
	} {
		row := rows[host]
		require.Len(t, row, 10+strings.Count(want.responses, " "), "%s: %v", host, row)
		requests, robotsFetches := 0, 0
		for _, a := range byHost[host] {
			if a.path == "/robots.txt" {
				robotsFetches++
			} else {
				requests++
			}
		}
		assert.Equal(t, strconv.Itoa(requests), row[1], "%s: requests", host)
		assert.Regexp(t, `^\d+\.\d\d/s$`, row[2], "%s: rate", host)
		assert.Equal(t, strconv.Itoa(want.retries), row[6], "%s: retries", host)
		assert.Equal(t, strconv.Itoa(robotsFetches), row[7], "%s: robots.txt fetches", host)
		assert.Equal(t, strconv.Itoa(want.errors), row[8], "%s: errors", host)
		assert.Equal(t, want.responses, strings.Join(row[9:], " "), "%s: responses", host)
		paused, err := time.ParseDuration(row[5])
		require.NoError(t, err)
		assert.LessOrEqual(t, paused, o.took, "%s: paused within the run", host)
	}
	assert.Regexp(t, regexp.MustCompile(`RETRY http://alice:xxxxx@127\.0\.0\.3:\d+/r/\d: .*robots\.txt answered 503`), o.stderr)
}

// TestFetchMaxWait checks that a URL whose turn comes later than -max-wait
// allows is reported as not fetched, with when it could have gone, and
// that the run then ends: behind a quota of 1 per hour, and behind a
// Retry-After of 600 s.
func TestFetchMaxWait(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "polite.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"default_config": {"requests_per_second": 100, "burst_capacity": 1, "quotas": [{"requests": 1, "window": "1h"}]}}`), 0o644))
	t.Run("quota", func(t *testing.T) {
		s := newSite(t, nil)
		o := runPolite(t, "", "fetch", "-config", cfg, "-max-wait", "2s", "-timeout", "3s", s.URL+"/a", s.URL+"/b")
		assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
		assert.Equal(t, []string{"/a"}, s.requests())
		assert.Regexp(t, `FAIL http://127\.0\.0\.1:\d+/b: not fetched: 127\.0\.0\.1's next turn comes at \d\d:\d\d:\d\d \(in (59m5\ds|1h0m0s)\), past -max-wait 2s`, o.stderr)
		assert.Contains(t, o.stderr, "1 fetched, 1 failed")
		assert.Less(t, o.took, 20*time.Second, "the run ends rather than wait an hour")
	})
	t.Run("quota restored from -state", func(t *testing.T) {
		s := newSite(t, nil)
		state := filepath.Join(t.TempDir(), "state")
		o := runPolite(t, "", "fetch", "-config", cfg, "-state", state, s.URL+"/a")
		require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
		o = runPolite(t, "", "fetch", "-config", cfg, "-state", state, "-max-wait", "2s", s.URL+"/b")
		assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
		assert.Equal(t, []string{"/a"}, s.requests())
		assert.Regexp(t, `FAIL http://127\.0\.0\.1:\d+/b: not fetched: .*past -max-wait 2s`, o.stderr)
		assert.Less(t, o.took, 20*time.Second, "the run ends rather than wait an hour")
	})
	t.Run("Retry-After", func(t *testing.T) {
		s := startSite(t, &site{statuses: map[string]int{"/a": http.StatusServiceUnavailable}, retryAfter: "600"})
		o := runPolite(t, "", "fetch", "-rate", "100", "-max-wait", "1m", s.URL+"/a", s.URL+"/b")
		assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
		assert.Equal(t, []string{"/a"}, s.requests(), "neither /a again nor /b within the pause")
		assert.Regexp(t, `FAIL 503 http://127\.0\.0\.1:\d+/a: not fetched: .* \(in 10m0s\), past -max-wait 1m0s`, o.stderr)
		assert.Regexp(t, `FAIL http://127\.0\.0\.1:\d+/b: not fetched: .* \(in 10m0s\), past -max-wait 1m0s`, o.stderr)
		assert.Less(t, o.took, 20*time.Second)
	})
}

// TestFetchJSONFigures checks that -json carries the table's figures: a
// page throttled once (429, Retry-After: 1) is fetched again after the
// pause, and the JSON says so as the server saw it.
func TestFetchJSONFigures(t *testing.T) {
	var once sync.Once
	throttled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := false
		once.Do(func() { first = true })
		if first {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer throttled.Close()
	o := runPolite(t, "", "fetch", "-json", "-rate", "10", throttled.URL+"/t")
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	var out map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &out), o.stdout)
	got, ok := out["127.0.0.1"]
	require.True(t, ok, o.stdout)
	assert.InDelta(t, 2.0, got["total_requests"], 0, "the 429 and the retry")
	assert.InDelta(t, 1.0, got["retries"], 0)
	assert.InDelta(t, 0.0, got["robots_requests"], 0)
	assert.Greater(t, got["rate_per_second"], 0.0)
	assert.Contains(t, got, "queue_wait_ms")
	paused := got["paused_in_run_ms"].(float64)
	assert.GreaterOrEqual(t, paused, 990.0, "Retry-After: 1")
	assert.LessOrEqual(t, paused, float64(o.took.Milliseconds()), "within the run")
}
