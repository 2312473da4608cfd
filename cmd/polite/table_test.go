package main

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/stats"
)

func TestWriteTable(t *testing.T) {
	all := map[string]stats.Snapshot{
		"b.test": {Domain: "b.test", TotalRequests: 12, DelayedRequests: 11, AverageWaitTime: 1360 * time.Millisecond,
			ThrottledResponses: 2, PausedTime: 2 * time.Second, FailedRequests: 1, CanceledRequests: 2,
			Responses: [6]int64{2: 10, 4: 2}},
		"a.test": {Domain: "a.test", TotalRequests: 1},
		"c.test": {Domain: "c.test", TotalRequests: 1, DisallowedRequests: 2, Responses: [6]int64{2: 1}},
	}
	var b strings.Builder
	require.NoError(t, writeTable(&b, all))
	rows := lines(b.String())
	require.Len(t, rows, 4)
	assert.Equal(t, []string{"a.test", "1", "0", "0.00s", "0", "0.00s", "0", "-"}, strings.Fields(rows[1]))
	assert.Equal(t, []string{"b.test", "12", "11", "1.36s", "2", "2.00s", "3", "2xx:10", "4xx:2"}, strings.Fields(rows[2]))
	assert.Equal(t, []string{"c.test", "1", "0", "0.00s", "0", "0.00s", "2", "2xx:1"}, strings.Fields(rows[3]), "robots.txt refusals are errors")
	assert.Equal(t, strings.Index(rows[0], "REQUESTS"), strings.Index(rows[2], "12"), "columns line up")
}

func TestDescribe(t *testing.T) {
	ok := result{target: target{raw: "http://a.test/x"}, status: 200, bytes: 1500, elapsed: 1234567 * time.Microsecond, file: "a.test/x"}
	assert.Equal(t, "200 http://a.test/x (1.5 kB in 1.235s) -> a.test/x", describe(ok))
	u, err := url.Parse("http://a.test/y")
	require.NoError(t, err)
	failed := result{target: target{raw: "http://a.test/y", url: u}, err: errors.New("boom")}
	assert.Equal(t, "FAIL http://a.test/y: boom", describe(failed))
	cut := result{target: target{raw: "http://a.test/z", url: u}, status: 200, err: errors.New("reading the body: EOF")}
	assert.Equal(t, "FAIL 200 http://a.test/z: reading the body: EOF", describe(cut))
	bad := parseTarget("http://a b/", nil)
	assert.Equal(t, `FAIL bad URL "http://a b/": invalid character " " in host name`, describe(result{target: bad, err: bad.err}))
}

func TestWaitLine(t *testing.T) {
	assert.Equal(t, "waiting: none", waitLine(nil))
	assert.Equal(t, "waiting: a.test 1.5s (paused: retry-after), b.test 0.2s +1 more", waitLine([]domainWait{
		{key: "a.test", wait: 1500 * time.Millisecond, paused: "retry-after"},
		{key: "b.test", wait: 200 * time.Millisecond},
		{key: "c.test", wait: 100 * time.Millisecond},
	}))
}
