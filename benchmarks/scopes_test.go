// The cost per request of each scope, run from the repository's root:
//
//	go test -run '^$' -bench Scopes -benchmem -count 6 ./benchmarks

package benchmarks

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/polite-go/polite"
)

// siteAddr resolves www.siteN.com to an address of its own.
func siteAddr(_ context.Context, host string) ([]netip.Addr, error) {
	n := siteNumber(host)
	return []netip.Addr{netip.AddrFrom4([4]byte{10, 0, byte(n >> 8), byte(n)})}, nil
}

// sharedAddr resolves www.siteN.com to one of 100 addresses, as shared
// hosting would.
func sharedAddr(_ context.Context, host string) ([]netip.Addr, error) {
	return []netip.Addr{netip.AddrFrom4([4]byte{10, 1, 0, byte(siteNumber(host) % 100)})}, nil
}

func siteNumber(host string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(host, "www.site"), ".com"))
	return n
}

// BenchmarkScopes measures a request through the Transport over 1,000
// domains, when tokens are always available, with the domain's scope only
// and with the server's, the global one, or both besides: what each scope
// costs a request is the difference from "domain". With a server each,
// the limiter holds 2,000 keys; on 100 shared servers, 1,100.
func BenchmarkScopes(b *testing.B) {
	scopes := []struct {
		name string
		opts []polite.Option
	}{
		{"domain", nil},
		{"server", []polite.Option{polite.WithLookup(siteAddr), polite.WithServerLimit(unlimited)}},
		{"server100", []polite.Option{polite.WithLookup(sharedAddr), polite.WithServerLimit(unlimited)}},
		{"global", []polite.Option{polite.WithGlobalLimit(unlimited)}},
		{"server+global", []polite.Option{polite.WithLookup(siteAddr), polite.WithServerLimit(unlimited), polite.WithGlobalLimit(unlimited)}},
	}
	for _, mode := range []string{"serial", "parallel"} {
		for _, sc := range scopes {
			b.Run(mode+"1000/"+sc.name, func(b *testing.B) {
				tr, err := polite.NewTransport(nopBase{}, append([]polite.Option{polite.WithDefault(unlimited)}, sc.opts...)...)
				if err != nil {
					b.Fatal(err)
				}
				reqs := requests(1000)
				roundTrip := func(req *http.Request) {
					resp, err := tr.RoundTrip(req)
					if err != nil {
						b.Error(err)
						return
					}
					resp.Body.Close()
				}
				for _, req := range reqs {
					roundTrip(req) // every domain and server known
				}
				b.ReportAllocs()
				b.ResetTimer()
				defer reportCPU(b)()
				if mode == "serial" {
					i := 0
					for b.Loop() {
						roundTrip(reqs[i%len(reqs)])
						i += 7
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					i := rand.IntN(len(reqs))
					for pb.Next() {
						roundTrip(reqs[i%len(reqs)])
						i += 7
					}
				})
			})
		}
	}
}
