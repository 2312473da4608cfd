package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFetchRobots(t *testing.T) {
	s := startSite(t, &site{robots: "User-agent: testbot\nDisallow: /private\n"})

	o := runPolite(t, "", "fetch", "-rate", "100", "-burst", "10", "-robots", "testbot", s.URL+"/public", s.URL+"/private/page")
	assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "FAIL "+s.URL+"/private/page")
	assert.Contains(t, o.stderr, "disallowed by robots.txt")
	assert.ElementsMatch(t, []string{"/robots.txt", "/public"}, s.requests(), "the disallowed page is never sent")
	table := lines(o.stdout)
	require.Len(t, table, 3, "stdout: %s", o.stdout)
	row := strings.Fields(table[1])
	assert.Equal(t, []string{"127.0.0.1", "1"}, row[:2], "/public was sent")
	assert.Equal(t, "1", row[7], "and robots.txt, counted apart")
	assert.Equal(t, "1", row[8], "the disallowed page is an error in the table")
	for _, agent := range s.userAgents() {
		assert.Equal(t, "testbot", agent, "the User-Agent names the agent, robots.txt's fetch included")
	}

	o = runPolite(t, "", "fetch", "-rate", "100", "-burst", "10", "-robots", "otherbot", s.URL+"/private/page")
	assert.Equal(t, exitOK, o.code, "the rule is for testbot only; stderr: %s", o.stderr)
}

func TestFetchRedisBadURL(t *testing.T) {
	o := runPolite(t, "", "fetch", "-redis", "http://localhost:6379", "http://a.test/")
	assertOneLineError(t, o, "-redis:")
}

// TestFetchRedisDown checks that the command works while Redis does not
// answer: each process paces on its own, and the stats say so.
func TestFetchRedisDown(t *testing.T) {
	s := newSite(t, nil)
	o := runPolite(t, "", "fetch", "-json", "-rate", "100", "-burst", "10", "-redis", "redis://"+freeAddr(t)+"/0", s.URL+"/1", s.URL+"/2")
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "redis unavailable", "Redis going away is logged, even without -v")
	got := parseStats(t, o.stdout)["127.0.0.1"]
	assert.Equal(t, int64(2), got.TotalRequests)
	require.Contains(t, o.stdout, `"degraded_requests": 2`)
}

// TestFetchRedisShared runs two polite fetch processes on one Redis: they
// share the domain's pace, so together they take as long as one process
// fetching both lists would.
func TestFetchRedisShared(t *testing.T) {
	addr := startRedis(t)
	s := newSite(t, nil)
	const perProcess = 5
	var wg sync.WaitGroup
	outcomes := make([]outcome, 2)
	errs := make([]error, 2)
	for i := range outcomes {
		args := []string{"fetch", "-json", "-rate", "5", "-burst", "1", "-redis", "redis://" + addr + "/0"}
		for j := range perProcess {
			args = append(args, fmt.Sprintf("%s/%d/%d", s.URL, i, j))
		}
		wg.Go(func() { outcomes[i], errs[i] = runBinary("", args...) })
	}
	wg.Wait()
	for i, o := range outcomes {
		require.NoError(t, errs[i])
		require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
		assert.Contains(t, o.stdout, `"degraded_requests": 0`, "paced through Redis")
	}
	arrivals := s.arrivalTimes()
	require.Len(t, arrivals, 2*perProcess)
	first, last := arrivals[0], arrivals[0]
	for _, a := range arrivals {
		if a.Before(first) {
			first = a
		}
		if a.After(last) {
			last = a
		}
	}
	// 10 requests at 5/s: 9 gaps of 200ms when shared; one process alone
	// would take 4 gaps.
	assert.GreaterOrEqual(t, last.Sub(first), 1500*time.Millisecond, "the two processes shared one pace")
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestFetchUserAgent checks the User-Agent that every request and
// robots.txt fetch carries: never the polite project as the crawler's
// owner, the operator's contact when given.
func TestFetchUserAgent(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, "polite-fetch"},
		{"contact", []string{"-contact", "https://example.com/bot"}, "polite-fetch (+https://example.com/bot)"},
		{"robots and contact", []string{"-robots", "testbot", "-contact", "mailto:ops@example.com"}, "testbot (+mailto:ops@example.com)"},
		{"user agent", []string{"-user-agent", "ExampleBot/2.1 (+https://example.com/bot)"}, "ExampleBot/2.1 (+https://example.com/bot)"},
		{"user agent and robots", []string{"-user-agent", "ExampleBot/2.1 (+https://example.com/bot)", "-robots", "ExampleBot"}, "ExampleBot/2.1 (+https://example.com/bot)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSite(t, &site{robots: "User-agent: *\nAllow: /\n"})
			args := append([]string{"fetch", "-rate", "100", "-burst", "10"}, tt.args...)
			o := runPolite(t, "", append(args, s.URL+"/a", s.URL+"/b")...)
			require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
			agents := s.userAgents()
			require.NotEmpty(t, agents)
			for _, agent := range agents {
				assert.Equal(t, tt.want, agent)
				assert.NotContains(t, agent, "github.com/polite-go")
			}
		})
	}
}
