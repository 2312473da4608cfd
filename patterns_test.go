package polite_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

func TestDomainPatterns(t *testing.T) {
	tests := []struct {
		name    string
		keyFunc polite.KeyFunc
		opts    []polite.Option
		slow    []string // URLs of different keys, each paced on its own by the hour-long limit
		fast    []string // URLs paced by the (fast) default or a fast entry
	}{
		{"hosts under a pattern", polite.HostKey,
			[]polite.Option{polite.WithDomain("*.example.com", everyHour)},
			[]string{"http://a.example.com/", "http://b.example.com/", "http://x.y.example.com/"},
			[]string{"http://example.com/", "http://example.org/", "http://notexample.com/"}},
		{"pattern spelt in upper case", polite.HostKey,
			[]polite.Option{polite.WithDomain("*.Example.COM.", everyHour)},
			[]string{"http://a.example.com/"}, nil},
		{"registrable domains under a public suffix", nil,
			[]polite.Option{polite.WithDomain("*.blogspot.com", everyHour)},
			[]string{"http://one.blogspot.com/", "http://www.two.blogspot.com/"},
			[]string{"http://example.com/"}},
		{"an exact entry beats a pattern", polite.HostKey,
			[]polite.Option{polite.WithDomain("fast.example.com", fastLimit), polite.WithDomain("*.example.com", everyHour)},
			[]string{"http://a.example.com/"},
			[]string{"http://fast.example.com/"}},
		{"a longer pattern beats a shorter one", polite.HostKey,
			[]polite.Option{polite.WithDomain("*.example.com", fastLimit), polite.WithDomain("*.slow.example.com", everyHour)},
			[]string{"http://a.slow.example.com/", "http://b.slow.example.com/"},
			[]string{"http://a.example.com/", "http://slow.example.com/"}},
		{"a pattern in the config file", polite.HostKey,
			[]polite.Option{polite.WithConfig(&config.File{Default: fastLimit, Domains: map[string]config.Limit{"*.example.com": everyHour}})},
			[]string{"http://a.example.com/", "http://b.example.com/"},
			[]string{"http://example.com/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := append([]polite.Option{polite.WithKeyFunc(tt.keyFunc), polite.WithDefault(fastLimit), polite.WithMaxWait(time.Minute)}, tt.opts...)
			tr := newTransport(t, countingBase(new(atomic.Int64)), opts...)
			for _, u := range tt.slow {
				assert.True(t, paced(t, tr, u), "%s is paced by the pattern, apart from the other keys", u)
			}
			for _, u := range tt.fast {
				assert.False(t, paced(t, tr, u), "%s is not paced by the pattern", u)
			}
		})
	}
}

func TestDomainPatternLimit(t *testing.T) {
	tr := newTransport(t, nil, polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit),
		polite.WithDomain("*.example.com", everyHour))
	assert.Equal(t, everyHour, tr.Limit("a.example.com"))
	assert.Equal(t, everyHour, tr.Limit("A.Example.com."))
	assert.Equal(t, fastLimit, tr.Limit("example.com"))
}

func TestDomainPatternErrors(t *testing.T) {
	tests := []struct {
		name, domain string
		keyFunc      polite.KeyFunc
	}{
		{"under DomainKey, no key is under a registrable domain", "*.example.com", nil},
		{"a star without a dot", "*example.com", polite.HostKey},
		{"a star alone", "*", polite.HostKey},
		{"two stars", "*.*.example.com", polite.HostKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := polite.NewTransport(nil, polite.WithKeyFunc(tt.keyFunc), polite.WithDomain(tt.domain, everySecond))
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.domain, fe.Domain)
			assert.Equal(t, "domains", fe.Field)
		})
	}
}

// TestDomainPatternPacesEachHostApart checks from the server's side that
// two hosts under one pattern each keep the pattern's gap, and do not
// share it: sharing, six requests would take 2.5 s; apart, 1 s.
func TestDomainPatternPacesEachHostApart(t *testing.T) {
	const gap = 500 * time.Millisecond
	s := newHostServer(t)
	tr := newTransport(t, s.base(), polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit),
		polite.WithDomain("*.example.com", config.Limit{MinDelay: gap}))
	hosts := []string{"a.example.com", "b.example.com"}
	start := time.Now()
	fetchAll(t, &http.Client{Transport: tr}, repeat(3, s.url(hosts[0], "/"), s.url(hosts[1], "/")))
	elapsed := time.Since(start)
	for _, h := range hosts {
		got := s.at(h)
		require.Len(t, got, 3, h)
		assert.GreaterOrEqual(t, minGap(got), gap-arrivalSlack, "%s keeps the pattern's gap", h)
	}
	assert.Less(t, elapsed, 2*time.Second, "the hosts are paced apart, not together (together: 2.5 s)")
}
