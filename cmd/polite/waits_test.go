package main

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestEstimate checks the time left: for each domain, its wait plus one
// interval of its pace per queued URL after the first; the longest wins.
func TestEstimate(t *testing.T) {
	tr, err := polite.NewTransport(http.DefaultTransport,
		polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1}),
		polite.WithDomain("slow.test", config.Limit{RequestsPerSecond: 10, Burst: 1, MinDelay: 3 * time.Second}))
	require.NoError(t, err)
	c := &crawl{transport: tr, queued: map[string]map[*attempt]bool{}}
	queue := func(key string, n int) {
		for range n {
			c.queueLocked(key, &attempt{})
		}
	}
	assert.Zero(t, c.estimate(), "nothing queued")
	queue("a.test", 5)
	queue("b.test", 2)
	assert.Equal(t, 2*time.Second, c.estimate(), "a.test: 4 intervals of 500ms")
	queue("slow.test", 2)
	assert.Equal(t, 3*time.Second, c.estimate(), "slow.test: its min_delay")
}

func TestETACache(t *testing.T) {
	var e etaCache
	calls := 0
	estimate := func() time.Duration { calls++; return time.Minute }
	assert.InDelta(t, time.Minute, e.get(estimate), float64(time.Second))
	assert.InDelta(t, time.Minute, e.get(estimate), float64(time.Second))
	assert.Equal(t, 1, calls, "asked once a second at most")
	assert.Equal(t, "1m48s", formatETA(107600*time.Millisecond))
}

// TestFetchHost checks that -host keys each host on its own.
func TestFetchHost(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "example.com"},
		{[]string{"-host"}, "www.example.com"},
	} {
		p, code := planFetch(append(c.args, "http://www.example.com/"), env{}, nil)
		require.NotNil(t, p, "exit %d", code)
		tg, ok := p.targets.next()
		require.True(t, ok)
		require.NoError(t, tg.err)
		assert.Equal(t, c.want, tg.key, "%v", c.args)
	}
}

// TestEstimateCountsTheGiveUp is issue 41's ETA on a dead host: once the
// first pause is known, the time left it claims is never less than half
// the time that really remained. A host answering only 502 is given up at
// its fifth failure, after pauses of 1, 2, 4 and 8 s: 15 s. Counting one
// interval of its pace per URL left, the estimate said 1 s where 15 s
// remained.
func TestEstimateCountsTheGiveUp(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 15 seconds")
	}
	dead := newSite(t, map[string]int{})
	for i := range 5 {
		dead.statuses[fmt.Sprintf("/%d", i)] = http.StatusBadGateway
	}
	tr, err := polite.NewTransport(http.DefaultTransport, polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 1}),
		polite.WithMaxErrors(5))
	require.NoError(t, err)
	var targets []target
	for i := range 5 {
		targets = append(targets, parseTarget(fmt.Sprintf("%s/%d", dead.URL, i), polite.DomainKey))
	}
	key := targets[0].key
	c := &crawl{client: &http.Client{Transport: tr}, transport: tr, concurrency: 2, display: &logDisplay{w: io.Discard},
		retries: 3, maxErrors: 5, maxPause: 10 * time.Minute}

	type sample struct {
		at  time.Time
		eta time.Duration
	}
	var samples []sample
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if c.figures.get(key).failing > 0 { // a pause is known
				samples = append(samples, sample{time.Now(), c.estimate()})
			}
		}
	}()
	c.run(t.Context(), &listSource{targets: targets})
	end := time.Now()
	close(stop)
	<-sampled

	require.NotEmpty(t, samples)
	for _, s := range samples {
		remained := end.Sub(s.at)
		assert.GreaterOrEqual(t, s.eta, remained/2, "at %v before the end, the ETA said %v", remained.Round(100*time.Millisecond), s.eta.Round(100*time.Millisecond))
	}
	t.Logf("%d samples; the first: %v left, the ETA said %v", len(samples), end.Sub(samples[0].at).Round(100*time.Millisecond), samples[0].eta.Round(100*time.Millisecond))
}
