package main

import (
	"net/http"

	"github.com/gocolly/colly/v2"

	"github.com/polite-go/polite"
)

// newCollector returns an asynchronous collector that follows every link
// within the allowed domains, its requests paced by t. Its transport is
// set with WithTransport.
func newCollector(t *polite.Transport, allowed ...string) *colly.Collector {
	c := colly.NewCollector(colly.AllowedDomains(allowed...), colly.Async(true))
	c.WithTransport(t)
	followLinks(c)
	return c
}

// newCollectorWithClient is newCollector with a client of one's own, set
// with SetClient: the way to choose the client's timeout, cookie jar or
// redirect policy.
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
