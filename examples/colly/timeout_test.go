package main

import (
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestThirtyURLsOfOneDomain crawls 30 URLs of one domain at 2 a second
// with an async collector: the last turn comes 14.5 s after the first,
// past colly's default timeout of 10 s. Timed by colly, the requests whose
// turn comes after it fail; timed by polite from their turn, as usePolite
// sets it up, all 30 are fetched.
func TestThirtyURLsOfOneDomain(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 15 s")
	}
	const urls = 30
	twoPerSecond := polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1})
	srv := httptest.NewServer(&site{})
	t.Cleanup(srv.Close) // after the parallel subtests, unlike a defer
	crawl := func(t *testing.T, c *colly.Collector) (fetched, failed int64) {
		var ok, bad atomic.Int64
		c.OnResponse(func(*colly.Response) { ok.Add(1) })
		c.OnError(func(*colly.Response, error) { bad.Add(1) })
		for i := range urls {
			require.NoError(t, c.Visit(fmt.Sprintf("%s/page/%d", srv.URL, i)))
		}
		c.Wait()
		return ok.Load(), bad.Load()
	}

	t.Run("timed by colly", func(t *testing.T) {
		t.Parallel()
		tr, err := polite.NewTransport(nil, twoPerSecond)
		require.NoError(t, err)
		c := colly.NewCollector(colly.Async(true))
		c.WithTransport(tr)
		fetched, failed := crawl(t, c)
		assert.EqualValues(t, urls, fetched+failed)
		assert.Positive(t, failed, "the turns after colly's 10 s fail")
	})
	t.Run("timed by polite from the turn", func(t *testing.T) {
		t.Parallel()
		tr, err := newTransport(nil, twoPerSecond)
		require.NoError(t, err)
		c := colly.NewCollector(colly.Async(true))
		usePolite(c, tr)
		start := time.Now()
		fetched, failed := crawl(t, c)
		assert.EqualValues(t, urls, fetched)
		assert.Zero(t, failed)
		assert.GreaterOrEqual(t, time.Since(start), 14*time.Second, "29 gaps of 500 ms")
	})
}
