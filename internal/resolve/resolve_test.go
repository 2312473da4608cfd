package resolve_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/internal/resolve"
)

func TestKey(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::9", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, resolve.Key(netip.MustParseAddr(tt.addr)), tt.addr)
	}
}

// counting is a lookup that maps every name to 10.0.0.n, n its call's
// number, and counts its calls.
type counting struct{ calls atomic.Int64 }

func (c *counting) lookup(context.Context, string) ([]netip.Addr, error) {
	n := c.calls.Add(1)
	return []netip.Addr{netip.AddrFrom4([4]byte{10, 0, byte(n >> 8), byte(n)})}, nil
}

func TestCacheRemembersUntilTheTTL(t *testing.T) {
	var c counting
	cache := resolve.New(c.lookup, 50*time.Millisecond, 10)
	first, err := cache.Server(context.Background(), "a.example")
	require.NoError(t, err)
	again, err := cache.Server(context.Background(), "a.example")
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.EqualValues(t, 1, c.calls.Load())

	time.Sleep(60 * time.Millisecond)
	later, err := cache.Server(context.Background(), "a.example")
	require.NoError(t, err)
	assert.NotEqual(t, first, later, "looked up again after the TTL")
	assert.EqualValues(t, 2, c.calls.Load())
}

func TestCacheAddressLiteralsNeedNoLookup(t *testing.T) {
	var c counting
	cache := resolve.New(c.lookup, time.Minute, 10)
	got, err := cache.Server(context.Background(), "2001:db8::1")
	require.NoError(t, err)
	assert.Equal(t, "2001:db8::/64", got)
	assert.Zero(t, c.calls.Load())
}

func TestCacheStaysBounded(t *testing.T) {
	const max, names = 8, 100
	var c counting
	cache := resolve.New(c.lookup, time.Hour, max)
	for i := range names {
		_, err := cache.Server(context.Background(), fmt.Sprintf("h%d.example", i))
		require.NoError(t, err)
	}
	before := c.calls.Load()
	for i := range names {
		_, err := cache.Server(context.Background(), fmt.Sprintf("h%d.example", i))
		require.NoError(t, err)
	}
	assert.GreaterOrEqual(t, c.calls.Load()-before, int64(names-max), "at most max names are remembered")
}

func TestCacheForgetsFailures(t *testing.T) {
	errDNS := errors.New("no such host")
	var calls atomic.Int64
	cache := resolve.New(func(context.Context, string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return nil, errDNS
		}
		return nil, nil
	}, time.Hour, 10)
	_, err := cache.Server(context.Background(), "a.example")
	assert.ErrorIs(t, err, errDNS)
	_, err = cache.Server(context.Background(), "a.example")
	assert.Error(t, err, "no address is a failure too")
	assert.EqualValues(t, 2, calls.Load(), "a failure is looked up again")
}

func TestCacheSharesOneLookup(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	cache := resolve.New(func(context.Context, string) ([]netip.Addr, error) {
		calls.Add(1)
		<-release
		return []netip.Addr{netip.MustParseAddr("192.0.2.7")}, nil
	}, time.Hour, 10)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			got, err := cache.Server(context.Background(), "a.example")
			assert.NoError(t, err)
			assert.Equal(t, "192.0.2.7", got)
		})
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	assert.EqualValues(t, 1, calls.Load())
}

func TestCacheCallerCancelledLookupGoesOn(t *testing.T) {
	release := make(chan struct{})
	cache := resolve.New(func(ctx context.Context, _ string) ([]netip.Addr, error) {
		<-release
		return []netip.Addr{netip.MustParseAddr("192.0.2.8")}, ctx.Err()
	}, time.Hour, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := cache.Server(ctx, "a.example")
	assert.ErrorIs(t, err, context.Canceled)
	close(release)
	got, err := cache.Server(context.Background(), "a.example")
	require.NoError(t, err)
	assert.Equal(t, "192.0.2.8", got)
}

func TestServerKeyIgnoresOrderAndFamilies(t *testing.T) {
	addrs := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	tests := []struct {
		name  string
		addrs []netip.Addr
		want  string
	}{
		{"one IPv4", addrs("192.0.2.9"), "192.0.2.9"},
		{"AAAA before A", addrs("2001:db8::1", "192.0.2.9"), "192.0.2.9"},
		{"round robin", addrs("192.0.2.9", "192.0.2.3", "192.0.2.200"), "192.0.2.3"},
		{"round robin, turned", addrs("192.0.2.200", "192.0.2.9", "192.0.2.3"), "192.0.2.3"},
		{"a mapped IPv4 is IPv4", addrs("2001:db8::1", "::ffff:192.0.2.4", "192.0.2.9"), "192.0.2.4"},
		{"IPv6 only: the smallest /64", addrs("2001:db8:0:2::1", "2001:db8:0:1::ff", "2001:db8:0:1::1"), "2001:db8:0:1::/64"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, resolve.ServerKey(tt.addrs), tt.name)
	}
}

func TestCacheKeepsTheLastKnownServer(t *testing.T) {
	errDNS := errors.New("server failure")
	var fail atomic.Bool
	var calls atomic.Int64
	cache := resolve.New(func(context.Context, string) ([]netip.Addr, error) {
		calls.Add(1)
		if fail.Load() {
			return nil, errDNS
		}
		return []netip.Addr{netip.MustParseAddr("192.0.2.5")}, nil
	}, 20*time.Millisecond, 10)
	got, err := cache.Server(context.Background(), "a.example")
	require.NoError(t, err)
	assert.Equal(t, "192.0.2.5", got)
	fail.Store(true)
	time.Sleep(30 * time.Millisecond)
	for range 2 {
		got, err = cache.Server(context.Background(), "a.example")
		require.NoError(t, err, "a failed lookup of a name that resolved before")
		assert.Equal(t, "192.0.2.5", got)
	}
	assert.EqualValues(t, 3, calls.Load(), "looked up again at each call while it fails")
	_, err = cache.Server(context.Background(), "b.example")
	assert.ErrorIs(t, err, errDNS, "a name that never resolved has no server")
}
