package polite

import (
	"crypto/tls"
	"errors"
	"net/http"
)

// tlsConfigurer is what a base transport other than an *http.Transport
// offers to take a TLS configuration, as a Transport does.
type tlsConfigurer interface {
	TLSClientConfig() *tls.Config
	SetTLSClientConfig(*tls.Config) error
}

// TLSClientConfig returns the TLS configuration of the base transport, so
// that client libraries that configure TLS through the transport (resty
// v3's SetRootCertificates, SetClientRootCertificates and
// SetCertificates) reach it through a Transport. For an *http.Transport
// base it returns its TLSClientConfig, which it first sets to an empty
// one if it has none, as those libraries do; a base with a
// TLSClientConfig method answers for itself. For any other base it
// returns a new, empty configuration that changes nothing: configure such
// a base before NewTransport.
//
// Change TLS settings before the Transport sends its first request, as
// with an *http.Transport. With NewTransport's nil base (a clone of
// http.DefaultTransport), they stay the Transport's own.
func (t *Transport) TLSClientConfig() *tls.Config {
	switch base := t.base.(type) {
	case *http.Transport:
		if base.TLSClientConfig == nil {
			base.TLSClientConfig = &tls.Config{}
		}
		return base.TLSClientConfig
	case tlsConfigurer:
		return base.TLSClientConfig()
	}
	return &tls.Config{}
}

// SetTLSClientConfig sets the TLS configuration of the base transport, as
// resty v3's SetTLSClientConfig asks of a transport: the TLSClientConfig
// of an *http.Transport base, or what a base with a SetTLSClientConfig
// method does with it. For any other base it is an error.
func (t *Transport) SetTLSClientConfig(c *tls.Config) error {
	if !t.made() {
		return errNotMade
	}
	switch base := t.base.(type) {
	case *http.Transport:
		base.TLSClientConfig = c
		return nil
	case tlsConfigurer:
		return base.SetTLSClientConfig(c)
	}
	return errNoTLSBase
}

var errNoTLSBase = errors.New("polite: SetTLSClientConfig: the base transport is no *http.Transport: configure TLS on the base before NewTransport")
