package polite_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTLSClientConfigReachesTheBase checks that a TLS configuration made
// through the Transport is the base's: a server whose certificate only
// that configuration trusts answers.
func TestTLSClientConfigReachesTheBase(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())

	t.Run("changed in place", func(t *testing.T) {
		tr := newTransport(t, nil)
		tr.TLSClientConfig().RootCAs = roots
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
	})
	t.Run("set", func(t *testing.T) {
		tr := newTransport(t, nil)
		require.NoError(t, tr.SetTLSClientConfig(&tls.Config{RootCAs: roots}))
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
	})
	t.Run("the nil base is not http.DefaultTransport", func(t *testing.T) {
		tr := newTransport(t, nil)
		tr.TLSClientConfig().RootCAs = roots
		_, err := http.DefaultClient.Get(srv.URL)
		assert.Error(t, err, "the program's default transport does not trust the server")
	})
	t.Run("a base that is no *http.Transport", func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)))
		assert.NotNil(t, tr.TLSClientConfig())
		assert.ErrorContains(t, tr.SetTLSClientConfig(&tls.Config{}), "configure TLS on the base before NewTransport")
	})
}
