// Command colly-polite crawls a site with colly, every request paced per
// domain by a polite Transport:
//
//	go run . -rate 2 https://example.com/
//
// It shows the two ways to hand colly a polite Transport: the collector's
// own client, c.WithTransport(t), or a client of your own,
// c.SetClient(&http.Client{Transport: t}). Either way, colly's LimitRule
// is not needed: polite paces each domain, redirects and robots.txt
// fetches included, and honours Retry-After.
//
// Timeouts: colly's client has a timeout of 10 s, which counts a request's
// wait for its turn. An async crawl asks for many pages of one domain at
// once; at 2 a second, the turn of the 22nd comes after 10 s, and it and
// those after it fail at once. So give the timeout to polite, which starts
// it with the request's turn, and none to colly:
//
//	t, err := polite.NewTransport(base, polite.WithTimeout(10*time.Second))
//	c.WithTransport(t)
//	c.SetRequestTimeout(0)
//
// Proxies: colly's SetProxy and SetProxyFunc replace the client's
// transport with a new *http.Transport whenever the transport in place is
// not an *http.Transport, which a polite Transport is not; after them,
// requests silently bypass polite. Set the proxy on the base transport
// under polite instead:
//
//	base := http.DefaultTransport.(*http.Transport).Clone()
//	base.Proxy = http.ProxyURL(proxyURL) // or a colly/proxy ProxyFunc
//	t, err := polite.NewTransport(base)
//	c.WithTransport(t)
//
// This example is its own module, so that polite itself does not depend
// on colly.
package main
