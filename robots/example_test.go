package robots_test

import (
	"fmt"

	"github.com/polite-go/polite/robots"
)

func Example() {
	r := robots.Parse([]byte(`# robots.txt for example.com
User-agent: *
Allow: /$
Disallow: /

User-agent: ExampleBot
Crawl-delay: 2.5
Disallow: /private
Disallow: /*.pdf$
Allow: /private/press-kit.pdf

Sitemap: https://example.com/sitemap.xml
`))

	for _, uri := range []string{
		"/",
		"/shop",
		"/private/x",
		"/public/../private/x",
		"/docs/manual.pdf",
		"/private/press-kit.pdf",
		"https://example.com/docs/manual.pdf?download=1",
	} {
		fmt.Printf("%-48s OtherBot: %-5v ExampleBot: %v\n", uri,
			r.Allowed("OtherBot", uri), r.Allowed("ExampleBot", uri))
	}
	d, ok := r.CrawlDelay("examplebot")
	fmt.Println("Crawl-delay:", d, ok)
	fmt.Println("Sitemaps:", r.Sitemaps())
	// Output:
	// /                                                OtherBot: true  ExampleBot: true
	// /shop                                            OtherBot: false ExampleBot: true
	// /private/x                                       OtherBot: false ExampleBot: false
	// /public/../private/x                             OtherBot: false ExampleBot: false
	// /docs/manual.pdf                                 OtherBot: false ExampleBot: false
	// /private/press-kit.pdf                           OtherBot: false ExampleBot: true
	// https://example.com/docs/manual.pdf?download=1   OtherBot: false ExampleBot: true
	// Crawl-delay: 2.5s true
	// Sitemaps: [https://example.com/sitemap.xml]
}
