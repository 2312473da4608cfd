package robots

import (
	"fmt"
	"strings"
	"testing"
)

// benchRobots is a file whose group for ExampleBot has 50 rules, most with
// wildcards, as large sites write them.
var benchRobots = func() string {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /private/\nDisallow: /*?sessionid=\n\n")
	b.WriteString("User-agent: OtherBot\nDisallow: /\n\n")
	b.WriteString("User-agent: ExampleBot\nCrawl-delay: 2\n")
	sections := []string{"shop", "blog", "news", "user", "wiki"}
	for _, s := range sections {
		fmt.Fprintf(&b, "Disallow: /%s/*/checkout\n", s)
		fmt.Fprintf(&b, "Allow: /%s/*/checkout/help$\n", s)
		fmt.Fprintf(&b, "Disallow: /%s/*?*sort=\n", s)
		fmt.Fprintf(&b, "Disallow: /%s/*.pdf$\n", s)
		fmt.Fprintf(&b, "Disallow: /*/%s/print\n", s)
		fmt.Fprintf(&b, "Allow: /%s/public/\n", s)
		fmt.Fprintf(&b, "Disallow: /%s/draft*\n", s)
		fmt.Fprintf(&b, "Disallow: /*?%s_id=*&ref=\n", s)
		fmt.Fprintf(&b, "Disallow: /%s/*/edit$\n", s)
		fmt.Fprintf(&b, "Disallow: /%s/tmp/\n", s)
	}
	b.WriteString("\nSitemap: https://example.com/sitemap.xml\n")
	return b.String()
}()

var benchURIs = []string{
	"/",
	"/shop/cart/checkout?step=2",
	"/shop/cart/checkout/help",
	"/blog/2024/05/a-long-article-title-about-robots.html",
	"/news/world/europe/story-123456?utm_source=feed&sort=date",
	"/wiki/Robots_exclusion_standard",
	"/user/42/edit",
	"/static/css/site.min.css",
}

// BenchmarkAllowed checks a URI against a group of 50 rules with wildcards.
func BenchmarkAllowed(b *testing.B) {
	r := Parse([]byte(benchRobots))
	if n := r.find(r.tokens, "examplebot"); len(n) != 1 || r.groups[n[0].group].hi-r.groups[n[0].group].lo != 50 {
		b.Fatalf("the benchmark group does not have 50 rules")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.Allowed("ExampleBot", benchURIs[i%len(benchURIs)])
	}
}

// BenchmarkAllowedParallel is BenchmarkAllowed from every CPU at once.
func BenchmarkAllowedParallel(b *testing.B) {
	r := Parse([]byte(benchRobots))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			r.Allowed("ExampleBot", benchURIs[i%len(benchURIs)])
		}
	})
}

// BenchmarkParse parses a file of about 500 KiB: benchRobots' rules for
// many crawlers.
func BenchmarkParse(b *testing.B) {
	var body strings.Builder
	for i := 0; body.Len() < maxBody-len(benchRobots); i++ {
		body.WriteString(strings.Replace(benchRobots, "ExampleBot", fmt.Sprintf("Bot%c%c", 'a'+i%26, 'a'+i/26%26), 1))
	}
	data := []byte(body.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(data)
	}
}

// BenchmarkHostile parses each 500 KiB hostile file and checks against
// it a URI of 200 and one of 3,000 octets, holding every octet its rules
// need.
func BenchmarkHostile(b *testing.B) {
	for name, body := range hostileFiles(maxBody) {
		data := []byte(body)
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			r := Parse(data)
			b.Run("Parse", func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					Parse(data)
				}
			})
			for _, n := range []int{150, 2000} {
				uri := hostileURI(n)
				b.Run(fmt.Sprintf("Allowed/%dB", len(uri)), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						r.Allowed("bot", uri)
					}
				})
			}
		})
	}
}
