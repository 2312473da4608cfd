package resty

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	restyv2 "github.com/go-resty/resty/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"resty.dev/v3"

	"github.com/polite-go/polite"
)

// tlsServer is a server whose certificate no system pool trusts, and the
// certificate's PEM.
func tlsServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv, string(pemCert)
}

// TestRestyV3TLSSettersReachTheBase checks that resty v3's TLS setters
// configure the base of a polite Transport, and that the request is paced
// through it.
func TestRestyV3TLSSettersReachTheBase(t *testing.T) {
	srv, pemCert := tlsServer(t)
	for name, configure := range map[string]func(*resty.Client){
		"SetRootCertificateFromString": func(c *resty.Client) { c.SetRootCertificateFromString(pemCert) },
		"SetTLSClientConfig": func(c *resty.Client) {
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM([]byte(pemCert))
			c.SetTLSClientConfig(&tls.Config{RootCAs: roots})
		},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := polite.NewTransport(nil)
			require.NoError(t, err)
			client := resty.New().SetTransport(tr)
			defer client.Close()
			configure(client)

			resp, err := client.R().Get(srv.URL)
			require.NoError(t, err)
			assert.Equal(t, "hello", resp.String())
			u, _ := url.Parse(srv.URL)
			s, ok := tr.Stats(u.Hostname())
			require.True(t, ok, "the request went through polite")
			assert.EqualValues(t, 1, s.TotalRequests)
		})
	}
}

// TestRestyV2WithTLSOnTheBase checks the way documented for resty v2:
// TLS set on the base before NewTransport.
func TestRestyV2WithTLSOnTheBase(t *testing.T) {
	srv, pemCert := tlsServer(t)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(pemCert))
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = &tls.Config{RootCAs: roots}
	tr, err := polite.NewTransport(base)
	require.NoError(t, err)

	resp, err := restyv2.New().SetTransport(tr).R().Get(srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "hello", resp.String())
	u, _ := url.Parse(srv.URL)
	s, ok := tr.Stats(u.Hostname())
	require.True(t, ok)
	assert.EqualValues(t, 1, s.TotalRequests)
}
