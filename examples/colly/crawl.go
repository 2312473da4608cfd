package main

import (
	"net/http"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/polite-go/polite"
)

// timeout is how long each request may take from its turn on: colly's
// default timeout, which polite.WithTimeout applies instead of colly.
const timeout = 10 * time.Second

// newTransport returns a Transport over base for usePolite, with opts.
func newTransport(base http.RoundTripper, opts ...polite.Option) (*polite.Transport, error) {
	return polite.NewTransport(base, append(opts, polite.WithTimeout(timeout))...)
}

// usePolite sends c's requests through t, a Transport from newTransport.
// colly's own timeout (10 s by default) would count each request's wait
// for its turn, and fail the requests of a busy domain whose turn comes
// after it; so c has none, and t's WithTimeout times each request from its
// turn instead.
func usePolite(c *colly.Collector, t *polite.Transport) {
	c.WithTransport(t)
	c.SetRequestTimeout(0)
}

// newCollector returns an asynchronous collector that follows every link
// within the allowed domains, its requests paced by t, a Transport from
// newTransport.
func newCollector(t *polite.Transport, allowed ...string) *colly.Collector {
	c := colly.NewCollector(colly.AllowedDomains(allowed...), colly.Async(true))
	usePolite(c, t)
	followLinks(c)
	return c
}

// newCollectorWithClient is newCollector with a client of one's own, set
// with SetClient: the way to choose the client's cookie jar or redirect
// policy. Leave its Timeout 0 and give the Transport WithTimeout, as
// usePolite does.
func newCollectorWithClient(client *http.Client, allowed ...string) *colly.Collector {
	c := colly.NewCollector(colly.AllowedDomains(allowed...), colly.Async(true))
	c.SetClient(client)
	followLinks(c)
	return c
}

func followLinks(c *colly.Collector) {
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		e.Request.Visit(e.Attr("href"))
	})
}
