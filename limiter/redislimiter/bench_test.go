package redislimiter

import (
	"context"
	"testing"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter"
)

// BenchmarkReserve measures limiter operations against one Redis, side by
// side with redis_rate (GCRA in Lua), each one round trip per operation,
// through the same client:
//
//	go test -run '^$' -bench BenchmarkReserve -benchtime=2000x ./limiter/redislimiter
//
// The client has ContextTimeoutEnabled, as the Limiter's doc advises;
// polite-deadline-ignoring-client measures the Limiter with a client
// without it, where each call runs on a goroutine of its own.
func BenchmarkReserve(b *testing.B) {
	srv := startRedis(b)
	client := redis.NewClient(&redis.Options{Addr: srv.addr(), ContextTimeoutEnabled: true})
	b.Cleanup(func() { client.Close() })
	ctx := context.Background()
	req := limiter.Request{Key: "bench.example", Rule: limiter.Rule{Rate: 1e6, Burst: 1000}}
	reserveWith := func(client redis.UniversalClient) func(*testing.B) {
		l, err := New(client, WithLogger(nil))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		return func(b *testing.B) {
			res, err := l.Reserve(ctx, req)
			if err != nil || res.Degraded {
				b.Fatalf("reserve: %v (degraded %v)", err, res.Degraded)
			}
		}
	}
	reserve := reserveWith(client)
	gcra := redis_rate.NewLimiter(client)
	limit := redis_rate.Limit{Rate: 1e6, Burst: 1000, Period: 1e9}
	allow := func(b *testing.B) {
		if _, err := gcra.Allow(ctx, "bench.example.gcra", limit); err != nil {
			b.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		op   func(*testing.B)
	}{{"polite", reserve}, {"redis_rate", allow}, {"polite-deadline-ignoring-client", reserveWith(srv.client())}} {
		tt.op(b) // load the script
		b.Run(tt.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tt.op(b)
			}
		})
		b.Run(tt.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					tt.op(b)
				}
			})
		})
	}
}
