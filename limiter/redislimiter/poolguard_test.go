package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestOutageLeavesThePoolUsable: many calls are under way, through a
// client of two connections with go-redis's default dial retries, when
// Redis dies. The
// Limiter sees the outage long before its timeout, cuts the calls short,
// paces in the fallback and probes outside the client's pool; so the
// pool's gate (after as many failed dials as it has connections, two
// here, go-redis fails every call at once and dials again only once a
// second) stays open, and the client reaches Redis the moment it is back.
func TestOutageLeavesThePoolUsable(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 2, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	logs := &logRecorder{}
	l, err := New(client, WithLogger(slog.New(logs)), WithTimeout(2*time.Second), WithProbeInterval(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })

	rule := limiter.Rule{Rate: 1000, Burst: 1000}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for d := range 16 {
		req := limiter.Request{Key: fmt.Sprintf("d%d.example", d), Rule: &rule}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := limiter.Wait(context.Background(), l, req)
				if !assert.NoError(t, err, "no request fails") {
					return
				}
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	time.Sleep(200 * time.Millisecond)
	killed := time.Now()
	srv.Kill()
	require.Eventually(t, l.down, 5*time.Second, time.Millisecond, "the outage is seen")
	// The stall check sees it within tens of milliseconds; the Limiter's
	// timeout, 2s, would take far longer. The bound is one-sided and
	// generous for a loaded machine: what shows that the pool's gate stayed
	// open is the Ping below.
	assert.Less(t, time.Since(killed), time.Second, "the outage is seen by the stall check, before the timeout")

	time.Sleep(time.Second) // paced in the fallback, probed outside the pool
	srv.Restart()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	assert.NoError(t, client.Ping(ctx).Err(), "the client's pool dials Redis again")
	eventuallyShared(t, l)
	assert.Equal(t, 1, logs.count(downLog), "one warning")
}

// slowConn is a connection to Redis 20ms away: each write waits first.
type slowConn struct{ net.Conn }

func (c slowConn) Write(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return c.Conn.Write(p)
}

// TestASlowRedisCostsFewDials: every call to a Redis 20ms away waits
// longer than the stall check's 10ms, one at a time; the dial that finds
// Redis there holds the next check off, so the Limiter dials about once
// a second, not once a call.
func TestASlowRedisCostsFewDials(t *testing.T) {
	srv := redistest.Start(t)
	var dials atomic.Int64
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return slowConn{conn}, nil
		}})
	t.Cleanup(func() { client.Close() })
	l, err := New(client, WithTimeout(time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })

	req := limiter.Request{Key: "slow.example", Rule: &limiter.Rule{Rate: 1000, Burst: 1000}}
	_, err = limiter.Wait(context.Background(), l, req) // the pool's first connection
	require.NoError(t, err)
	before, start := dials.Load(), time.Now()
	calls := 0
	for time.Since(start) < time.Second {
		w, err := limiter.Wait(context.Background(), l, req)
		require.NoError(t, err)
		require.False(t, w.Degraded, "a slow Redis is no outage")
		calls++
	}
	require.Greater(t, calls, 10, "each call waits out the stall check")
	assert.LessOrEqual(t, dials.Load()-before, int64(3), "dials in a second of %d calls", calls)
}
