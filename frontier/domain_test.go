package frontier

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// TestDomainEstimatesTurnsFromItsLimit hands out at the times given and
// checks the estimated next turn after each.
func TestDomainEstimatesTurnsFromItsLimit(t *testing.T) {
	cases := []struct {
		name  string
		limit config.Limit
		at    []time.Duration // hand-out times
		want  []time.Duration // next turn after each
	}{
		{"one per second", config.Limit{RequestsPerSecond: 1, Burst: 1},
			[]time.Duration{0, ms(1000), ms(3500)}, []time.Duration{ms(1000), ms(2000), ms(4500)}},
		{"a burst of three, then the rate", config.Limit{RequestsPerSecond: 10, Burst: 3},
			[]time.Duration{0, 0, 0, ms(100), ms(1000)},
			[]time.Duration{0, 0, ms(100), ms(200), ms(1000)}},
		{"min delay alone", config.Limit{MinDelay: ms(300)},
			[]time.Duration{0, ms(300), ms(1000)}, []time.Duration{ms(300), ms(600), ms(1300)}},
		{"min delay over a faster bucket", config.Limit{RequestsPerSecond: 10, Burst: 5, MinDelay: ms(250)},
			[]time.Duration{0, ms(250)}, []time.Duration{ms(250), ms(500)}},
		{"disabled", config.Limit{Disabled: true}, []time.Duration{0, 0}, []time.Duration{0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain("a.test", c.limit, t0)
			for i, at := range c.at {
				d.advance(t0.Add(at))
				assert.False(t, d.checked)
				assert.Equal(t, c.want[i], d.readyAt.Sub(t0), "after the hand-out at %v", at)
			}
		})
	}
}

// TestDomainTakesTheTransportsAnswer checks that an answer from the
// Transport replaces the estimate.
func TestDomainTakesTheTransportsAnswer(t *testing.T) {
	cases := []struct {
		name     string
		estimate time.Duration // next turn as estimated
		now      time.Duration
		wait     time.Duration // the Transport's answer
		want     time.Duration
	}{
		{"later than estimated (a pause, jitter, another process)", ms(500), ms(500), ms(4000), ms(4500)},
		{"sooner than estimated (a turn given back)", ms(500), ms(100), 0, ms(100)},
		{"ready as estimated keeps its place in line", ms(500), ms(900), 0, ms(500)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDomain("a.test", config.Limit{RequestsPerSecond: 2, Burst: 1}, t0)
			d.advance(t0)
			require.Equal(t, c.estimate, d.readyAt.Sub(t0))
			d.setChecked(t0.Add(c.now), c.wait)
			assert.True(t, d.checked)
			assert.Equal(t, c.want, d.readyAt.Sub(t0))
		})
	}
	t.Run("a turn given back counts as free", func(t *testing.T) {
		d := newDomain("a.test", config.Limit{RequestsPerSecond: 1, Burst: 1}, t0)
		d.advance(t0)
		d.setChecked(t0.Add(ms(100)), 0)
		d.advance(t0.Add(ms(100)))
		assert.Equal(t, ms(1100), d.readyAt.Sub(t0), "one interval after the hand-out that took it")
	})
}

func TestFIFOKeepsOrderAndGivesBackMemory(t *testing.T) {
	var q fifo
	var want []string
	next := 0
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 20_000 {
		popOdds := 0.25 // grow, then shrink
		if i >= 10_000 {
			popOdds = 0.75
		}
		if q.len() > 0 && rnd.Float64() < popOdds {
			require.Equal(t, want[0], q.pop().req.URL.Path)
			want = want[1:]
		} else {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://a.test/%d", next), nil)
			next++
			q.push(entry{req: req, attempt: 1})
			want = append(want, req.URL.Path)
		}
		require.LessOrEqual(t, cap(q.items), 4*q.len()+128, "the slice's slack stays bounded")
	}
	for q.len() > 0 {
		require.Equal(t, want[0], q.pop().req.URL.Path)
		want = want[1:]
	}
	assert.LessOrEqual(t, cap(q.items), 64, "an emptied queue lets a large slice go")
}

func TestHeapOrdersFixesAndRemoves(t *testing.T) {
	h := heap{less: func(a, b *domain) bool { return a.inFlight < b.inFlight }}
	rnd := rand.New(rand.NewPCG(3, 4))
	var all []*domain
	for i := range 200 {
		d := &domain{key: fmt.Sprint(i), inFlight: rnd.IntN(50)}
		all = append(all, d)
		h.push(d)
	}
	for _, d := range all[:50] { // change some, remove others
		d.inFlight = rnd.IntN(50)
		h.fix(d)
	}
	for _, d := range all[50:100] {
		h.remove(d)
		assert.Equal(t, -1, d.index)
	}
	var got []int
	for h.len() > 0 {
		got = append(got, h.pop().inFlight)
	}
	assert.Len(t, got, 150)
	assert.True(t, slices.IsSorted(got))
}

func TestNormalURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://a.test", "http://a.test/"},
		{"HTTP://A.Test:80/x#frag", "http://a.test/x"},
		{"https://a.test:443/x?b=1&a=2", "https://a.test/x?b=1&a=2"},
		{"https://a.test:8443/x", "https://a.test:8443/x"},
		{"http://[::1]:80/x", "http://[::1]/x"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		{"http://a.test/X", "http://a.test/X"},
	} {
		u, err := url.Parse(c.in)
		require.NoError(t, err)
		assert.Equal(t, c.want, normalURL(u), c.in)
	}
}

func TestSeenKeyOnlyForGetAndHead(t *testing.T) {
	get, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
	head, _ := http.NewRequest(http.MethodHead, "http://a.test/", nil)
	post, _ := http.NewRequest(http.MethodPost, "http://a.test/", nil)
	kGet, ok := seenKey(get)
	require.True(t, ok)
	kHead, ok := seenKey(head)
	require.True(t, ok)
	assert.NotEqual(t, kGet, kHead, "a HEAD is not a GET")
	_, ok = seenKey(post)
	assert.False(t, ok, "a POST is never dropped")
}
