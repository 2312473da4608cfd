package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestFetchHangingDomainDoesNotStarveOthers is issue 13's case: beside a
// domain whose responses hang until -timeout, a fast domain's 40 URLs take
// about as long as alone, because the hanging domain holds at most its
// share of the workers (2 of 4) while the fast one has URLs left. Without
// the share every worker would be hanging within 0.4 s, and the fast
// domain would wait for the timeout.
func TestFetchHangingDomainDoesNotStarveOthers(t *testing.T) {
	const timeout = 10 * time.Second
	fast := newSite(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.2:0") // another domain key on this machine
	if err != nil {
		t.Skipf("SKIPPED: cannot listen on 127.0.0.2 for a second domain: %v", err)
	}
	hanging := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the client gives up
	}))
	hanging.Listener.Close()
	hanging.Listener = ln
	hanging.Start()
	defer hanging.Close()

	fetch := func(withHanging bool) (span time.Duration, o outcome) {
		args := []string{"fetch", "-rate", "10", "-burst", "1", "-concurrency", "4", "-timeout", timeout.String(), "-retries", "0"}
		for i := range 40 {
			if withHanging && i < 4 {
				args = append(args, fmt.Sprintf("%s/hang/%d", hanging.URL, i))
			}
			args = append(args, fmt.Sprintf("%s/fast/%d", fast.URL, i))
		}
		before := len(fast.arrivalTimes())
		o = runPolite(t, "", args...)
		arrivals := fast.arrivalTimes()[before:]
		require.Len(t, arrivals, 40, "stderr: %s", o.stderr)
		return arrivals[len(arrivals)-1].Sub(arrivals[0]), o
	}
	alone, o := fetch(false)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	beside, o := fetch(true)
	t.Logf("a fast domain's 40 URLs at 10/s with 4 workers: %v alone, %v beside a domain whose responses hang until the %v timeout (the whole run: %v)",
		alone.Round(time.Millisecond), beside.Round(time.Millisecond), timeout, o.took.Round(time.Millisecond))
	assert.Equal(t, exitFailed, o.code, "the hanging URLs time out")
	assert.Contains(t, o.stderr, "40 fetched, 4 failed")
	assert.GreaterOrEqual(t, beside, 3900*time.Millisecond, "paced at 10/s")
	assert.Less(t, beside, timeout, "the fast domain never waited for a hanging response to time out")
}

// TestFetchInterruptedSaysWhatIsLeft checks that when the context ends,
// the URLs not started yet are counted in one line, not lost, and not
// listed one by one.
func TestFetchInterruptedSaysWhatIsLeft(t *testing.T) {
	s := newSite(t, nil)
	args := []string{"fetch", "-rate", "0.5", "-burst", "1"}
	for i := range 6 {
		args = append(args, fmt.Sprintf("%s/%d", s.URL, i))
	}
	// The end comes once the first request arrived, 2 s before the second
	// may go: a fixed deadline could come before the first on a loaded
	// machine.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for len(s.requests()) == 0 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr})
	assert.Equal(t, exitFailed, code, "stderr: %s", stderr.String())
	assert.Len(t, s.requests(), 1, "one turn came before the end")
	assert.Contains(t, stderr.String(), "6 URLs in")
	assert.Contains(t, stderr.String(), "1 fetched, 0 failed, 5 not started (stopped)")
	assert.Len(t, lines(stderr.String()), 2, "one line for the URL fetched, one for the summary; stderr: %s", stderr.String())
}

func TestRecentKeys(t *testing.T) {
	var r recentKeys
	for i := range maxRecent + 4 {
		key := fmt.Sprintf("d%d.test", i)
		r.add(key)
		r.add(key)
		r.taken(key)
	}
	r.taken("d5.test") // again: to the front
	r.done("d5.test")
	got := r.list()
	require.Len(t, got, maxRecent, "at most maxRecent keys")
	assert.Equal(t, "d5.test", got[0], "most recent first")
	assert.Equal(t, fmt.Sprintf("d%d.test", maxRecent+3), got[1])
	r.done("d5.test")
	assert.False(t, slices.Contains(r.list(), "d5.test"), "a key with nothing left is not listed")
	assert.NotContains(t, r.left, "d5.test", "nor kept")
}

// statusAtRetry is a display that notes the status line when an attempt
// is to be made again.
type statusAtRetry struct {
	status func() string
	lines  []string
}

func (d *statusAtRetry) start(_ int, status func() string) { d.status = status }
func (d *statusAtRetry) retry(result, time.Time)           { d.lines = append(d.lines, d.status()) }
func (d *statusAtRetry) done(result)                       {}
func (d *statusAtRetry) finish()                           {}

// TestWaitingListsADomainWhoseURLWaitsToComeBack checks that a domain
// whose only URL was asked to come back (a 503 with Retry-After: 1) is
// still among those the status line says a request waits for: its target
// is not done with its first attempt.
func TestWaitingListsADomainWhoseURLWaitsToComeBack(t *testing.T) {
	s := startSite(t, &site{statuses: map[string]int{"/a": http.StatusServiceUnavailable}, retryAfter: "1"})
	tr, err := polite.NewTransport(http.DefaultTransport, polite.WithDefault(config.Limit{RequestsPerSecond: 100, Burst: 1}))
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	tg := parseTarget(s.URL+"/a", polite.DomainKey)
	require.NoError(t, tg.err)
	d := &statusAtRetry{}
	c := &crawl{client: &http.Client{Transport: tr}, transport: tr, concurrency: 1, display: d, retries: 1}
	c.run(t.Context(), &listSource{targets: []target{tg}})
	require.Len(t, d.lines, 1, "one retry")
	assert.Contains(t, d.lines[0], tg.key, "the domain waits for its pause")
}
