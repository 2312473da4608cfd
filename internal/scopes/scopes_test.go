package scopes

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/limiter"
)

// TestServerScopesStayBounded: past max servers, the least recently used
// that no request claims are forgotten; one a request claims is kept.
func TestServerScopesStayBounded(t *testing.T) {
	tb := New(nil, 3)
	claimed := tb.acquireServer("192.0.2.1")
	for i := range 10 {
		s := tb.acquireServer(fmt.Sprintf("198.51.100.%d", i))
		s.claimed.Add(-1)
	}
	assert.LessOrEqual(t, tb.servers.Len(), 3+1)
	assert.Same(t, claimed, tb.acquireServer("192.0.2.1"), "the server a request claims is kept")
}

// TestOrderPutsTheLastWaiterFirst: the turn of the scope that last made a
// request wait goes first, its request and claim with it; with no such
// scope among a request's turns, their order stays.
func TestOrderPutsTheLastWaiterFirst(t *testing.T) {
	tb := New(nil, 3)
	reqs := []limiter.Request{{Key: "example.com"}, {Key: "ip:192.0.2.1"}, {Key: "(global)"}}
	names := []string{Domain, Server, Global}
	claims := []int{-1, 0, 1}
	tb.Order(reqs, names, claims)
	assert.Equal(t, []string{Domain, Server, Global}, names, "no scope made a request wait yet")

	tb.WaitedFor(Global)
	tb.Order(reqs, names, claims)
	assert.Equal(t, []string{Global, Server, Domain}, names)
	assert.Equal(t, []limiter.Request{{Key: "(global)"}, {Key: "ip:192.0.2.1"}, {Key: "example.com"}}, reqs)
	assert.Equal(t, []int{1, 0, -1}, claims)

	tb.WaitedFor(Server)
	domainOnly := []string{Domain}
	tb.Order([]limiter.Request{{Key: "example.com"}}, domainOnly, []int{-1})
	assert.Equal(t, []string{Domain}, domainOnly)
}

// TestPeekServerNeitherClaimsNorAdds: a server peeked at is not claimed,
// and one the table does not hold is not added; like one acquired, it
// starts with the latest request of the hosts that never resolved.
func TestPeekServerNeitherClaimsNorAdds(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "nowhere.test" {
			return nil, errors.New("no such host")
		}
		return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
	}
	tb := New(lookup, 3)
	ctx := t.Context()
	unknown := tb.AcquireServer(ctx, "nowhere.test")
	sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	Claims{{Scope: unknown}}.Sent(sent)

	peeked := tb.PeekServer(ctx, "a.test")
	assert.Equal(t, "ip:192.0.2.1", peeked.Key)
	assert.WithinDuration(t, sent, peeked.Request(&limiter.Rule{}).LastStart, 0)
	assert.Zero(t, peeked.claimed.Load())
	assert.Zero(t, tb.servers.Len(), "peeking adds no server")

	acquired := tb.AcquireServer(ctx, "a.test")
	assert.Equal(t, int64(1), acquired.claimed.Load())
	assert.Same(t, acquired, tb.PeekServer(ctx, "b.test"), "a server the table holds is the one peeked at")
	assert.Same(t, unknown, tb.PeekServer(ctx, "nowhere.test"))
}
