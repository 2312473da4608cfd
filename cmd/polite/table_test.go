package main

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/stats"
)

func TestWriteTable(t *testing.T) {
	end := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	all := map[string]stats.Snapshot{
		"b.test": {Domain: "b.test", TotalRequests: 12, RobotsRequests: 1, TotalWaitTime: 1360 * time.Millisecond,
			PausedTime: 7 * time.Second, PausedUntil: end.Add(4 * time.Second), PauseReason: "backoff",
			FailedRequests: 1, CanceledRequests: 2, Responses: [6]int64{2: 10, 4: 2}, QueuedTime: 2500 * time.Millisecond},
		"a.test":     {Domain: "a.test", TotalRequests: 1},
		"127.0.0.10": {Domain: "127.0.0.10", TotalRequests: 1, DisallowedRequests: 2, Responses: [6]int64{2: 1}},
		"127.0.0.2":  {Domain: "127.0.0.2", PausedTime: time.Hour, PausedUntil: end.Add(10 * time.Second), PauseReason: "retry-after"},
	}
	var figs figures
	figs.sent("b.test", end.Add(-10*time.Second))
	figs.sent("b.test", end.Add(-6*time.Second))
	figs.sent("b.test", end.Add(-2*time.Second))
	figs.retried("b.test")
	rows := domainRows(all, &figs, 20*time.Second, end)
	var b strings.Builder
	require.NoError(t, writeTable(&b, rows))
	table := lines(b.String())
	require.Len(t, table, 6)
	assert.Equal(t, queuedLegend, table[5])
	assert.Equal(t, []string{"127.0.0.2", "0", "-", "0.00s", "0.00s", "20.00s", "0", "0", "0", "-"}, strings.Fields(table[1]), "IP addresses sort as addresses; the time paused is never more than the run")
	assert.Equal(t, []string{"127.0.0.10", "1", "-", "0.00s", "0.00s", "0.00s", "0", "0", "2", "2xx:1"}, strings.Fields(table[2]), "robots.txt refusals are errors")
	assert.Equal(t, []string{"a.test", "1", "-", "0.00s", "0.00s", "0.00s", "0", "0", "0", "-"}, strings.Fields(table[3]))
	assert.Equal(t, []string{"b.test", "12", "0.25/s", "2.50s", "1.36s", "3.00s", "1", "1", "3", "2xx:10", "4xx:2"}, strings.Fields(table[4]),
		"3 requests over 8 s; paused 7 s of which 4 s come after the end")
	assert.Equal(t, strings.Index(table[0], "REQUESTS"), strings.Index(table[4], "12"), "columns line up")

	data, err := json.Marshal(rowsByDomain(rows))
	require.NoError(t, err)
	var out map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	b2 := out["b.test"]
	assert.InDelta(t, 0.25, b2["rate_per_second"], 1e-9)
	assert.InDelta(t, 2500.0, b2["queue_wait_ms"], 1e-9)
	assert.InDelta(t, 3000.0, b2["paused_in_run_ms"], 1e-9)
	assert.InDelta(t, 1.0, b2["retries"], 1e-9)
	assert.InDelta(t, 1.0, b2["robots_requests"], 1e-9)
	assert.InDelta(t, 12.0, b2["total_requests"], 1e-9)
	assert.InDelta(t, 1360.0, b2["total_wait_time_ms"], 1e-9)
	assert.InDelta(t, 20000.0, out["127.0.0.2"]["paused_in_run_ms"], 1e-9, "never more than the run")
}

func TestCompareDomains(t *testing.T) {
	keys := []string{"b.test", "127.0.0.10", "a.test", "::1", "127.0.0.2", "127.0.0.2:80", "10.0.0.1:8080"}
	slices.SortFunc(keys, compareDomains)
	assert.Equal(t, []string{"10.0.0.1:8080", "127.0.0.2", "127.0.0.2:80", "127.0.0.10", "::1", "a.test", "b.test"}, keys)
}

func TestDescribe(t *testing.T) {
	ok := result{target: target{raw: "http://a.test/x"}, status: 200, bytes: 1500, elapsed: 1234567 * time.Microsecond, file: "a.test/x"}
	assert.Equal(t, "200 http://a.test/x (1.5 kB in 1.235s) -> a.test/x", describe(ok))
	// Issue 41's "(529 B in 2.031s)" for a 30 ms answer after its robots.txt and its turn.
	waited := result{target: target{raw: "http://a.test/w"}, status: 200, bytes: 529, elapsed: 2031 * time.Millisecond, waited: 2001 * time.Millisecond}
	assert.Equal(t, "200 http://a.test/w (529 B in 30ms, after 2.001s waiting)", describe(waited))
	y, err := url.Parse("http://a.test/y")
	require.NoError(t, err)
	failed := result{target: target{raw: "http://a.test/y", url: y}, err: errors.New("boom")}
	assert.Equal(t, "FAIL http://a.test/y: boom", describe(failed))
	z, err := url.Parse("http://a.test/z")
	require.NoError(t, err)
	cut := result{target: target{raw: "http://a.test/z", url: z}, status: 200, err: errors.New("reading the body: EOF")}
	assert.Equal(t, "FAIL 200 http://a.test/z: reading the body: EOF", describe(cut))
	bad := parseTarget("http://a b/", nil)
	assert.Equal(t, `FAIL bad URL "http://a b/": invalid character " " in host name`, describe(result{target: bad, err: bad.err}))

	secret := parseTarget("http://alice:PW-1@a.test/s", polite.DomainKey)
	require.NoError(t, secret.err)
	assert.Equal(t, "200 http://alice:xxxxx@a.test/s (0 B in 0s)", describe(result{target: secret, status: 200}))
	assert.Equal(t, "RETRY http://alice:xxxxx@a.test/s: 429; attempt 2 in 0s", describeRetry(result{target: secret, status: 429, attempt: 1}, time.Now()))
	badSecret := parseTarget("http://alice:PW-2@a b/", nil)
	assert.Equal(t, `FAIL bad URL "http://alice:xxxxx@a b/": invalid character " " in host name`, describe(result{target: badSecret, err: badSecret.err}))
}

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"http://a.test/":               "http://a.test/",
		"http://alice:PW@a.test/p?q=1": "http://alice:xxxxx@a.test/p?q=1",
		"http://alice@a.test/":         "http://alice@a.test/",
		"http://alice:PW@a b/x@y":      "http://alice:xxxxx@a b/x@y",
		"http://alice:P@W@a b/":        "http://alice:xxxxx@a b/",
		"not a url: alice:PW@a.test":   "not a url: alice:PW@a.test",
		"http://a b/path:with@at":      "http://a b/path:with@at",
		"http://alice:PW%zz@a.test/":   "http://alice:xxxxx@a.test/",
		"https://u:p@[::1]:8443/x?y#z": "https://u:xxxxx@[::1]:8443/x?y#z",
	} {
		assert.Equal(t, want, redact(raw), raw)
	}
}

func TestWaitLine(t *testing.T) {
	assert.Equal(t, "waiting: none", waitLine(nil))
	assert.Equal(t, "waiting: a.test 1.5s (paused: retry-after), b.test 0.2s +1 more", waitLine([]domainWait{
		{key: "a.test", wait: 1500 * time.Millisecond, paused: "retry-after"},
		{key: "b.test", wait: 200 * time.Millisecond},
		{key: "c.test", wait: 100 * time.Millisecond},
	}))
}
