package polite_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestLookupsKeyTheirArgument checks that Stats, RemainingWait and Limit
// answer for the domain a host name or URL is paced under, as a request to
// it would be keyed.
func TestLookupsKeyTheirArgument(t *testing.T) {
	hour := config.Limit{MinDelay: time.Hour}
	tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
		return answer(req, http.StatusOK), nil
	}), polite.WithDomain("example.com", hour))
	req, _ := http.NewRequest(http.MethodGet, "http://www.example.com/", nil)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()

	for _, name := range []string{"example.com", "www.example.com", "WWW.Example.COM.", "www.example.com:8443", "https://www.example.com/a"} {
		t.Run(name, func(t *testing.T) {
			assert.Greater(t, tr.RemainingWait(name), 59*time.Minute)
			assert.Equal(t, hour, tr.Limit(name))
			s, ok := tr.Stats(name)
			require.True(t, ok)
			assert.Equal(t, "example.com", s.Domain)
			assert.EqualValues(t, 1, s.TotalRequests)
		})
	}
	_, ok := tr.Stats("example.org")
	assert.False(t, ok)
	assert.Zero(t, tr.RemainingWait("www.example.org"))
	assert.Equal(t, config.Limit{RequestsPerSecond: 1, Burst: 1}, tr.Limit("www.example.org"))
}

// TestWithDomainRefusesURLsPathsAndPorts checks that a domain name with
// what a domain has not is an error saying what to write.
func TestWithDomainRefusesURLsPathsAndPorts(t *testing.T) {
	tests := []struct {
		name    string
		keyFunc polite.KeyFunc
		want    string
	}{
		{"https://example.com", nil, `config: domain "https://example.com": domains: a URL, not a domain name: write "example.com", the key its requests are paced under`},
		{"https://www.example.com/", polite.HostKey, `a URL, not a domain name: write "www.example.com"`},
		{"example.com/shop", nil, `a path, not a domain name: write "example.com"`},
		{"example.com:8080", nil, `a port, not a domain name: write "example.com"`},
		{"[2001:db8::1]:443", nil, `a port, not a domain name: write "2001:db8::1"`},
		{"file:///x", nil, `a URL, not a domain name: write the domain as the key function names it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := polite.NewTransport(nil, polite.WithKeyFunc(tt.keyFunc), polite.WithDomain(tt.name, config.Limit{MinDelay: time.Second}))
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.name, fe.Domain)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	// A key function that keys requests by host and port may be given one.
	byHostPort := func(req *http.Request) (string, error) { return req.URL.Host, nil }
	tr, err := polite.NewTransport(nil, polite.WithKeyFunc(byHostPort), polite.WithDomain("example.com:8080", config.Limit{MinDelay: time.Hour}))
	require.NoError(t, err)
	assert.Equal(t, time.Hour, tr.Limit("example.com:8080").MinDelay)
}
