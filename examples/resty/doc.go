// Package resty shows a polite Transport under resty, whose TLS and proxy
// setters need to reach the transport that dials.
//
// resty v3 (resty.dev/v3) configures TLS through any transport with
// TLSClientConfig and SetTLSClientConfig methods, which a polite
// Transport has: SetRootCertificates, SetClientRootCertificates,
// SetCertificates and SetTLSClientConfig reach its base *http.Transport.
//
//	t, err := polite.NewTransport(nil)
//	client := resty.New().SetTransport(t).SetRootCertificates("ca.pem")
//
// resty v2's TLS setters, and SetProxy in both versions (as colly's), work
// on an *http.Transport only; with a polite Transport in its place they
// log an error and change nothing. Set TLS and the proxy on the base
// instead, before NewTransport:
//
//	base := http.DefaultTransport.(*http.Transport).Clone()
//	base.TLSClientConfig = &tls.Config{RootCAs: pool}
//	base.Proxy = http.ProxyURL(proxyURL)
//	t, err := polite.NewTransport(base)
//	client := resty.New().SetTransport(t)
//
// This example is its own module, so that polite itself does not depend
// on resty.
package resty
