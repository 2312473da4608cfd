package main

import (
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
