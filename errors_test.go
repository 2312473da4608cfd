package polite_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// A request refused because its turn comes after the client's timeout
// looks to callers like net/http's own timeouts.
func TestWaitErrorForADeadlineIsATimeout(t *testing.T) {
	tr, err := polite.NewTransport(baseFunc(func(req *http.Request) (*http.Response, error) {
		return answer(req, http.StatusOK), nil
	}), polite.WithDefault(config.Limit{RequestsPerSecond: 0.1, Burst: 1}))
	require.NoError(t, err)
	client := &http.Client{Transport: tr, Timeout: time.Second}
	resp, err := client.Get("http://example.com/")
	require.NoError(t, err)
	resp.Body.Close()
	_, err = client.Get("http://example.com/")
	require.Error(t, err)
	var ue *url.Error
	require.True(t, errors.As(err, &ue))
	assert.True(t, ue.Timeout(), "url.Error.Timeout")
	assert.True(t, os.IsTimeout(err), "os.IsTimeout")
	var ne net.Error
	require.True(t, errors.As(err, &ne))
	assert.True(t, ne.Timeout())
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "example.com: request not sent: its turn comes at ")
	assert.Contains(t, err.Error(), "Client.Timeout or context deadline exceeded")

	var we *polite.WaitError
	require.True(t, errors.As(err, &we))
	assert.WithinDuration(t, time.Now().Add(10*time.Second), we.RetryAt, 2*time.Second)
	assert.Contains(t, err.Error(), "its turn comes at "+we.RetryAt.Local().Format("2006-01-02T15:04:05.000Z07:00")+",",
		"a local RFC 3339 time to the millisecond, not nanoseconds in UTC")
}

// A URL with no host goes to the base unpaced, as net/http would send
// it, counted under "(no host)"; a key function can refuse it instead.
func TestRequestsWithNoHostGoUnpaced(t *testing.T) {
	sent := 0
	base := baseFunc(func(req *http.Request) (*http.Response, error) {
		sent++
		return answer(req, http.StatusOK), nil
	})
	tr, err := polite.NewTransport(base, polite.WithDefault(config.Limit{RequestsPerSecond: 0.001, Burst: 1}))
	require.NoError(t, err)
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, "file:///etc/hosts", nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, 3, sent, "none waited")
	s, ok := tr.Stats("(no host)")
	require.True(t, ok)
	assert.Equal(t, int64(3), s.TotalRequests)

	refusing := func(req *http.Request) (string, error) {
		if req.URL.Host == "" {
			return "", errors.New("no host, no request")
		}
		return polite.DomainKey(req)
	}
	tr, err = polite.NewTransport(base, polite.WithKeyFunc(refusing))
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodGet, "file:///etc/hosts", nil)
	_, err = tr.RoundTrip(req)
	assert.ErrorContains(t, err, "no host, no request")
	assert.Equal(t, 3, sent)
}

// An IPv6 literal with a zone is keyed as its address, and dialled as
// net/http would.
func TestZoneLiteralsKeyAsTheirAddress(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://[fe80::1%25eth0]:8080/", nil)
	for _, f := range []polite.KeyFunc{polite.DomainKey, polite.HostKey} {
		key, err := f(req)
		require.NoError(t, err)
		assert.Equal(t, "fe80::1", key)
	}
}

// TestZeroTransportRefuses checks that a zero Transport fails with an error,
// not a panic, and closes the request's body.
func TestZeroTransportRefuses(t *testing.T) {
	var tr polite.Transport
	body := &closeCounter{Reader: strings.NewReader("x")}
	req, err := http.NewRequest(http.MethodPost, "http://example.com/", body)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	assert.Nil(t, resp)
	assert.EqualError(t, err, "polite: a Transport must be made by NewTransport")
	assert.EqualValues(t, 1, body.closes.Load())
}

// TestZeroTransportReportsNothing checks that a zero Transport's other
// methods report nothing and refuse every change, without a panic.
func TestZeroTransportReportsNothing(t *testing.T) {
	var tr polite.Transport
	req, err := http.NewRequest(http.MethodGet, "http://www.example.com/", nil)
	require.NoError(t, err)
	notMade := "polite: a Transport must be made by NewTransport"
	assert.EqualError(t, tr.SetLimit("example.com", config.Limit{}), notMade)
	assert.EqualError(t, tr.SetConfig(&config.File{}), notMade)
	_, err = tr.Key(req)
	assert.EqualError(t, err, notMade)
	assert.Equal(t, config.Limit{}, tr.Limit("example.com"))
	_, ok := tr.ServerLimit()
	assert.False(t, ok)
	_, ok = tr.GlobalLimit()
	assert.False(t, ok)
	_, ok = tr.Stats("example.com")
	assert.False(t, ok)
	assert.Empty(t, tr.AllStats())
	assert.Zero(t, tr.RemainingWait("example.com"))
	assert.Zero(t, tr.RequestWait(req))
	assert.EqualError(t, tr.SetTLSClientConfig(&tls.Config{}), notMade)
	assert.NotNil(t, tr.TLSClientConfig(), "an empty configuration that changes nothing")
	assert.NoError(t, tr.Close())
	tr.CloseIdleConnections()
}
