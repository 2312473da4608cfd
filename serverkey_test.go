package polite_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// arrivalBase answers every request at once and notes when each arrived.
type arrivalBase struct {
	mu       sync.Mutex
	arrivals []time.Time
}

func (b *arrivalBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.arrivals = append(b.arrivals, time.Now())
	b.mu.Unlock()
	return answer(req, http.StatusOK), nil
}

// sorted returns the arrivals so far, in order.
func (b *arrivalBase) sorted() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.SortedFunc(slices.Values(b.arrivals), time.Time.Compare)
}

// sendAll sends a GET of each URL at once, each from its own goroutine,
// and waits for them.
func sendAll(t *testing.T, rt http.RoundTripper, urls ...string) {
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() { assert.NoError(t, roundTrip(t, rt, t.Context(), u)) })
	}
	wg.Wait()
}

// TestServerLimitPacesHostsWhoseLookupFails checks from the server's
// side that hosts whose lookup fails while the base still reaches them
// keep a server's pace: ten hosts on one address, whose first lookup
// fails, go 400 ms apart; once they resolve, the server keeps its gap
// from the latest of them.
func TestServerLimitPacesHostsWhoseLookupFails(t *testing.T) {
	const gap = 400 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		looked := map[string]int{}
		lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
			mu.Lock()
			defer mu.Unlock()
			if looked[host]++; looked[host] == 1 {
				return nil, errors.New("server failure")
			}
			return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
		}
		base := &arrivalBase{}
		tr := newTransport(t, base, polite.WithDefault(fastLimit), polite.WithLookup(lookup),
			polite.WithServerLimit(config.Limit{MinDelay: gap}))
		var urls []string
		for i := range 10 {
			urls = append(urls, fmt.Sprintf("http://h%d.test/", i))
		}
		sendAll(t, tr, urls...)
		sendAll(t, tr, urls[0])
		got := base.sorted()
		require.Len(t, got, 11)
		assert.GreaterOrEqual(t, minGap(got), gap, "one pace for the hosts that did not resolve, and from them to their server")
	})
}

// TestServerLimitOneServerWhateverItsAddresses checks from the server's
// side that names of one server share its pace whatever the order and the
// families of the addresses each resolves to.
func TestServerLimitOneServerWhateverItsAddresses(t *testing.T) {
	const gap = 400 * time.Millisecond
	addrs := map[string][]netip.Addr{
		"dual.test":  {netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("192.0.2.1")},
		"v4.test":    {netip.MustParseAddr("192.0.2.1")},
		"robin.test": {netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")},
		"nibor.test": {netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.1")},
		"v6.test":    {netip.MustParseAddr("2001:db8:0:2::1"), netip.MustParseAddr("2001:db8:0:1::1")},
		"v6rev.test": {netip.MustParseAddr("2001:db8:0:1::1"), netip.MustParseAddr("2001:db8:0:2::1")},
	}
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) { return addrs[host], nil }
	for _, pair := range [][2]string{{"dual.test", "v4.test"}, {"robin.test", "nibor.test"}, {"v6.test", "v6rev.test"}} {
		t.Run(pair[0]+" and "+pair[1], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &arrivalBase{}
				tr := newTransport(t, base, polite.WithDefault(fastLimit), polite.WithLookup(lookup),
					polite.WithServerLimit(config.Limit{MinDelay: gap}))
				sendAll(t, tr, "http://"+pair[0]+"/", "http://"+pair[1]+"/")
				got := base.sorted()
				require.Len(t, got, 2)
				assert.GreaterOrEqual(t, got[1].Sub(got[0]), gap, "one server, one pace")
			})
		})
	}
}
