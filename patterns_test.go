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

// TestNamesThatCanNeverMatchAreRefused checks that every entry point
// refuses, as a *config.FieldError naming it, a name the matcher can
// never match under the key function: a "*" anywhere but at the start of
// a pattern, a pattern over no host name, a name its requests are keyed
// apart from.
func TestNamesThatCanNeverMatchAreRefused(t *testing.T) {
	names := []string{"a.*.com", "*.a.com/x", "*.a.com?q", "*.a.com:8080", "*.a.com#f", "**.x", "*", "*..com", "a.com/x", "a.com?q"}
	fileOnly := map[string]bool{"a.*.com": true, "*.a.com/x": true, "*.a.com?q": true, "*.a.com:8080": true, "*.a.com#f": true, "**.x": true, "*": true, "*..com": true}
	entries := map[string]func(tr *polite.Transport, name string) error{
		"WithDomain": func(_ *polite.Transport, name string) error {
			_, err := polite.NewTransport(nil, polite.WithKeyFunc(polite.HostKey), polite.WithDomain(name, everySecond))
			return err
		},
		"SetLimit": func(tr *polite.Transport, name string) error { return tr.SetLimit(name, everySecond) },
		"SetConfig": func(tr *polite.Transport, name string) error {
			return tr.SetConfig(&config.File{Default: everySecond, Domains: map[string]config.Limit{name: everySecond}})
		},
		"WithConfig": func(_ *polite.Transport, name string) error {
			_, err := polite.NewTransport(nil, polite.WithKeyFunc(polite.HostKey),
				polite.WithConfig(&config.File{Default: everySecond, Domains: map[string]config.Limit{name: everySecond}}))
			return err
		},
	}
	tr := newTransport(t, nil, polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit))
	for _, name := range names {
		for entry, set := range entries {
			t.Run(entry+" "+name, func(t *testing.T) {
				var fe *config.FieldError
				require.ErrorAs(t, set(tr, name), &fe)
				assert.Equal(t, name, fe.Domain)
				assert.Equal(t, "domains", fe.Field)
			})
		}
		if fileOnly[name] {
			t.Run("config.Parse "+name, func(t *testing.T) {
				_, err := config.Parse([]byte(`{"domains": {"` + name + `": {"min_delay": "1s"}}}`))
				var fe *config.FieldError
				require.ErrorAs(t, err, &fe, "a form no key function can match")
				assert.Equal(t, name, fe.Domain)
			})
		}
	}
	assert.Equal(t, fastLimit, tr.Limit("x.a.com"), "a refused change changes nothing")
}

// TestReadmeScopesPatternWorks checks that the patterns the README's
// Scopes paragraph shows work as written: "*.blogspot.com" from a config
// file under the default key function, "*.example.com" under HostKey;
// and that "*.example.com" under the default says what to write.
func TestReadmeScopesPatternWorks(t *testing.T) {
	load := func(pattern string) *config.File {
		f, err := config.Parse([]byte(`{"default_config": {"requests_per_second": 1000, "burst_capacity": 100},
			"domains": {"` + pattern + `": {"min_delay": "1h"}}}`))
		require.NoError(t, err)
		return f
	}
	opts := []polite.Option{polite.WithMaxWait(time.Minute)}
	tr := newTransport(t, countingBase(new(atomic.Int64)), append(opts, polite.WithConfig(load("*.blogspot.com")))...)
	assert.True(t, paced(t, tr, "http://one.blogspot.com/"))
	assert.True(t, paced(t, tr, "http://two.blogspot.com/"), "each blog apart: its first request goes at once")
	tr = newTransport(t, countingBase(new(atomic.Int64)), append(opts, polite.WithKeyFunc(polite.HostKey), polite.WithConfig(load("*.example.com")))...)
	assert.True(t, paced(t, tr, "http://a.example.com/"))

	_, err := polite.NewTransport(nil, polite.WithConfig(load("*.example.com")))
	assert.ErrorContains(t, err, `write "example.com"`)
}
