package polite

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// TestDomainUsedKeepsTheTimeToItsGrain checks that a domain notes when it
// was used to within usedGrain, so that a sweep finds the least recently
// used, while a busy domain's requests seldom write the time.
func TestDomainUsedKeepsTheTimeToItsGrain(t *testing.T) {
	var d domain
	t0 := time.Unix(1_700_000_000, 0)
	d.used(t0)
	assert.Equal(t, t0.UnixNano(), d.lastUsed.Load(), "the first use is noted")
	d.used(t0.Add(usedGrain / 2))
	assert.Equal(t, t0.UnixNano(), d.lastUsed.Load(), "a use within the grain is not written")
	d.used(t0.Add(usedGrain))
	assert.Equal(t, t0.Add(usedGrain).UnixNano(), d.lastUsed.Load(), "a use a grain later is")
}

// TestSweepForgetsTheHostsOfForgottenDomains checks that a host whose
// domain a sweep forgot is forgotten with it, so that its next request
// remembers the new domain instead of meeting the old one, evicted, on
// every request.
func TestSweepForgetsTheHostsOfForgottenDomains(t *testing.T) {
	ok := roundTripper(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	tr, err := NewTransport(ok, WithMaxDomains(1), WithDefault(config.Limit{RequestsPerSecond: 1e6, Burst: 1}))
	require.NoError(t, err)
	get := func(u string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, u, nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	hosts := tr.domains.hosts
	require.NotNil(t, hosts, "the default key function depends on the host alone")

	get("http://www.a.com/")
	get("http://b.com/")
	_, tracked := tr.domains.load("a.com")
	require.False(t, tracked, "the sweep forgot a.com")
	_, known := hosts.m.Load("www.a.com")
	assert.False(t, known, "and its host")

	get("http://www.a.com/")
	d, tracked := tr.domains.load("a.com")
	require.True(t, tracked)
	remembered, known := hosts.m.Load("www.a.com")
	require.True(t, known)
	assert.Same(t, d, remembered, "the host leads to the domain tracked now")
}
