package robots_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/robots"
)

// TestIssue10 holds the bugs of issue 10, found in the matcher polite used
// before this package, as regression cases.
func TestIssue10(t *testing.T) {
	const homeOnly = "User-agent: *\nAllow: /$\nDisallow: /\n"
	const publicHTML = "User-agent: *\nDisallow: /\nAllow: /public/*.html\n"
	const foo = "User-agent: foo\nDisallow: /\n"
	const comment = "User-agent: *\nDisallow: /foo/quz#qux\n"
	const escaped = "User-agent: *\nDisallow: /a%2A\nDisallow: /b%24\nDisallow: /c%2a%24$\n"
	const private = "User-agent: *\nDisallow: /private\n"
	tests := []struct {
		name               string
		robots, agent, uri string
		want               bool
	}{
		{"home page only: the home page", homeOnly, "bot", "/", true},
		{"home page only: a directory", homeOnly, "bot", "/private/", false},
		{"home page only: a page", homeOnly, "bot", "/a/b.html", false},
		{"home page only: a query", homeOnly, "bot", "/?q=1", false},
		{"wildcard from the first octet", publicHTML, "bot", "/private/public/a.html", false},
		{"wildcard from the first octet: a match", publicHTML, "bot", "/public/a.html", true},
		{"whole token: foo is not foobot", foo, "foobot", "/x", true},
		{"whole token: foo", foo, "foo", "/x", false},
		{"whole token: FOO", foo, "FOO", "/x", false},
		{"comment after a rule", comment, "bot", "/foo/quz", false},
		{"comment after a rule: the rule is not longer", comment, "bot", "/foo/qu", true},
		{"%2A is a literal *", escaped, "bot", "/a*", false},
		{"%2A is a literal *, in the URI too", escaped, "bot", "/a%2A", false},
		{"%2A is no wildcard", escaped, "bot", "/ab", true},
		{"%24 is a literal $", escaped, "bot", "/b$", false},
		{"%24 is no anchor", escaped, "bot", "/b", true},
		{"%24 is no anchor: a prefix", escaped, "bot", "/b$c", false},
		{"%2a%24$: both literal, then the end", escaped, "bot", "/c*$", false},
		{"%2a%24$: not a prefix", escaped, "bot", "/c*$x", true},
		{"a tie: Allow listed second wins", "User-agent: *\nDisallow: /x\nAllow: /x\n", "bot", "/x", true},
		{"a tie: Allow listed first wins", "User-agent: *\nAllow: /x\nDisallow: /x\n", "bot", "/x", true},
		{"a tie with wildcards", "User-agent: *\nDisallow: /*.a\nAllow: /*.a\n", "bot", "/b.a", true},
		{"a tie across merged groups, Allow first", "User-agent: bot\nAllow: /x\n\nUser-agent: bot\nDisallow: /x\n", "bot", "/x", true},
		{"a tie across merged groups, Allow second", "User-agent: bot\nDisallow: /x\n\nUser-agent: bot\nAllow: /x\n", "bot", "/x", true},
		{"merged groups: the longest match in either", "User-agent: bot\nAllow: /x\n\nUser-agent: bot\nDisallow: /x/y\n", "bot", "/x/y", false},
		// "/x/page." is 8 octets, "/*.html" 7: the Allow is longer.
		{"a rule is measured by its octets", "User-agent: *\nAllow: /x/page.\nDisallow: /*.html\n", "bot", "/x/page.html", true},
		{"a rule is measured by its octets: a longer Disallow", "User-agent: *\nAllow: /x/page.\nDisallow: /*/*.html\n", "bot", "/x/page.html", false},
		{"quxbot: an empty group at the end", rfcExample, "quxbot", "/example/page.html", true},
		{"dot segments", private, "bot", "/public/../private/x", false},
		{"a dot segment", private, "bot", "/./private/x", false},
		{"encoded dot segments", private, "bot", "/public/%2e%2e/private/x", false},
		{"encoded dot segments, upper case", private, "bot", "/public/%2E%2E/private/x", false},
		{"half-encoded dot segments", private, "bot", "/public/.%2e/private/x", false},
		{"dot segments in a URL", private, "bot", "https://example.com/a/b/../../private", false},
		{"too many dot segments", private, "bot", "/../../private", false},
		{"dot segments that leave it", private, "bot", "/private/../public", true},
		{"dots that are no segment", private, "bot", "/.../private", true},
		{"dot segments in the query stay", private, "bot", "/x?/../private", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, robots.Parse([]byte(tt.robots)).Allowed(tt.agent, tt.uri))
		})
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		name, value string
		want        time.Duration
		ok          bool
	}{
		{"seconds", "10", 10 * time.Second, true},
		{"a fraction", "0.5", 500 * time.Millisecond, true},
		{"zero", "0", 0, true},
		{"an exponent", "1e1", 10 * time.Second, true},
		{"spaces and a comment", "  2 # two", 2 * time.Second, true},
		{"huge", "99999999999", math.MaxInt64, true},
		{"huger", "1e300", math.MaxInt64, true},
		{"beyond float64", "1e400", math.MaxInt64, true},
		{"just beyond a Duration", "9223372037", math.MaxInt64, true},
		{"negative", "-1", 0, false},
		{"negative and huge", "-1e400", 0, false},
		{"malformed", "ten", 0, false},
		{"units", "10s", 0, false},
		{"infinity", "Inf", 0, false},
		{"not a number", "NaN", 0, false},
		{"hex", "0x10", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := robots.Parse([]byte("User-agent: *\nCrawl-delay: " + tt.value + "\n"))
			d, ok := r.CrawlDelay("bot")
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, d)
			assert.GreaterOrEqual(t, d, time.Duration(0))
		})
	}
}

func TestCrawlDelayGroups(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\nCrawl-delay: 5\n\n" +
		"User-agent: a\nCrawl-delay: 1\nDisallow: /x\n\n" +
		"User-agent: b\nDisallow: /y\n\n" +
		"User-agent: c\nCrawl-delay: bad\nCrawl-delay: 3\nDisallow: /z\n\n" +
		"User-agent: a\nDisallow: /w\nCrawl-delay: 2\n\n" +
		"User-agent: d\ncrawldelay: 4\n"
	r := robots.Parse([]byte(body))
	tests := []struct {
		agent string
		want  time.Duration
		ok    bool
	}{
		{"A", time.Second, true},         // the first of its merged groups
		{"b", 0, false},                  // a group of its own, without one: not "*"'s
		{"c", 3 * time.Second, true},     // a malformed value is skipped
		{"d", 4 * time.Second, true},     // a misspelling
		{"zed", 5 * time.Second, true},   // "*"'s
		{"", 5 * time.Second, true},      // no token: "*"'s
		{"a/1.0", 5 * time.Second, true}, // not the token a
	}
	for _, tt := range tests {
		d, ok := r.CrawlDelay(tt.agent)
		assert.Equal(t, tt.ok, ok, tt.agent)
		assert.Equal(t, tt.want, d, tt.agent)
	}
	d, ok := robots.Parse([]byte("Crawl-delay: 5\nUser-agent: *\nDisallow: /\n")).CrawlDelay("a")
	assert.True(t, ok, "a Crawl-delay before any group applies to every crawler")
	assert.Equal(t, 5*time.Second, d)

	// Like Sitemap, Crawl-delay is one of RFC 9309's other records, which
	// end no group (section 2.2.4): the two User-agent lines are one group
	// for the rules, but the Crawl-delay belongs to "*" alone.
	r = robots.Parse([]byte("User-agent: *\nCrawl-delay: 10\n\nUser-agent: b\nDisallow: /x\n"))
	_, ok = r.CrawlDelay("b")
	assert.False(t, ok)
	assert.False(t, r.Allowed("other", "/x"))
}

func TestSitemaps(t *testing.T) {
	r := robots.Parse([]byte("Sitemap: https://a.example/1.xml\n" +
		"User-agent: *\nsite-map: https://a.example/2.xml # two\nDisallow: /\n" +
		"SITEMAP:https://a.example/3.xml\nSitemap:\n"))
	want := []string{"https://a.example/1.xml", "https://a.example/2.xml", "https://a.example/3.xml"}
	assert.Equal(t, want, r.Sitemaps())
	r.Sitemaps()[0] = "changed"
	assert.Equal(t, want, r.Sitemaps(), "the caller gets a copy")
	assert.Empty(t, robots.Parse(nil).Sitemaps())
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, robots, agent, uri string
		want                     bool
	}{
		{"misspelt useragent", "useragent: a\ndisallow: /\n", "a", "/x", false},
		{"misspelt user agent", "user agent: a\ndisallow: /\n", "a", "/x", false},
		{"misspelt dissallow", "user-agent: a\ndissallow: /\n", "a", "/x", false},
		{"misspelt dissalow", "user-agent: a\ndissalow: /\n", "a", "/x", false},
		{"misspelt disalow", "user-agent: a\ndisalow: /\n", "a", "/x", false},
		{"misspelt diasllow", "user-agent: a\ndiasllow: /\n", "a", "/x", false},
		{"misspelt disallaw", "user-agent: a\ndisallaw: /\n", "a", "/x", false},
		{"an unknown key", "user-agent: a\ndisallows: /\n", "a", "/x", true},
		{"no colon", "user-agent a\ndisallow /\n", "a", "/x", false},
		{"no colon, three words", "user-agent a\ndisallow / x\n", "a", "/x", true},
		{"tabs", "user-agent:\ta\n\tdisallow\t:\t/x\t\n", "a", "/x", false},
		{"a token with a version", "user-agent: FooBot/1.2\ndisallow: /\n", "foobot", "/x", false},
		{"a token with a version: the agent is the token", "user-agent: FooBot/1.2\ndisallow: /\n", "FooBot/1.2", "/x", true},
		{"a token and more words", "user-agent: FooBot Images\ndisallow: /\n", "FooBot", "/x", false},
		{"a star and more words", "user-agent: * bots\ndisallow: /\n", "a", "/x", false},
		{"a star in a token", "user-agent: a*\ndisallow: /\n", "a", "/x", false},
		{"a star before a token", "user-agent: *a\ndisallow: /\n", "a", "/x", true},
		{"no token", "user-agent: /1.0\ndisallow: /\n", "a", "/x", true},
		{"an empty agent", "user-agent: *\ndisallow: /\n", "", "/x", false},
		{"a rule without a slash", "user-agent: *\ndisallow: x\n", "a", "/x", true},
		{"a rule starting with a star", "user-agent: *\ndisallow: *x\n", "a", "/ax", false},
		{"a space in a rule", "user-agent: *\ndisallow: /a b\n", "a", "/a%20b", false},
		{"a $ inside a rule is literal", "user-agent: *\ndisallow: /a$b\n", "a", "/a$b", false},
		{"a $ inside a rule is no anchor", "user-agent: *\ndisallow: /a$b\n", "a", "/a", true},
		{"a rule of stars", "user-agent: *\ndisallow: /**\n", "a", "/x", false},
		{"$ alone", "user-agent: *\ndisallow: $\n", "a", "/", true},
		{"*$", "user-agent: *\ndisallow: *$\n", "a", "/x", false},
		{"a non-ASCII URI", "user-agent: *\ndisallow: /ü\n", "a", "/%C3%BC", false},
		{"a non-ASCII URI, lower case", "user-agent: *\ndisallow: /ü\n", "a", "/%c3%bc", false},
		{"a stray %", "user-agent: *\ndisallow: /100%\n", "a", "/100%25", false},
		{"a stray %, in the URI", "user-agent: *\ndisallow: /100%25\n", "a", "/100%", false},
		{"%2F is not /", "user-agent: *\ndisallow: /a/b\n", "a", "/a%2Fb", true},
		{"%2F in a query is /", "user-agent: *\ndisallow: /a?b=/c\n", "a", "/a?b=%2fc", false},
		{"%26 in a query is not &", "user-agent: *\ndisallow: /a?b&c\n", "a", "/a?b%26c", true},
		{"%7E is ~", "user-agent: *\ndisallow: /~a\n", "a", "/%7ea", false},
		{"a fragment", "user-agent: *\ndisallow: /a$\n", "a", "/a#b", false},
		{"a URL without a path", "user-agent: *\ndisallow: /$\n", "a", "https://example.com", false},
		{"a URL without a path, with a query", "user-agent: *\ndisallow: /?\n", "a", "https://example.com?x", false},
		{"a URL with a port and user", "user-agent: *\ndisallow: /a\n", "a", "https://u:p@example.com:8080/a", false},
		{"/robots.txt in a URL", "user-agent: *\ndisallow: /\n", "a", "http://example.com/robots.txt", true},
		{"/robots.txt with a query is another URI", "user-agent: *\ndisallow: /\n", "a", "/robots.txt?x", false},
		{"an encoded /robots.txt", "user-agent: *\ndisallow: /\n", "a", "/%72obots.txt", true},
		{"CR line ends", "user-agent: a\rdisallow: /\r", "a", "/x", false},
		{"NUL in a line", "user-agent: a\ndisallow: /\x00\n", "a", "/%00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, robots.Parse([]byte(tt.robots)).Allowed(tt.agent, tt.uri))
		})
	}
}

// TestParseLimit checks that Parse reads 500 KiB and cuts a longer body
// after its last complete line.
func TestParseLimit(t *testing.T) {
	const limit = 500 << 10
	head := "User-agent: *\nDisallow: /first\n"
	pad := strings.Repeat("#", limit-len(head)-len("\nDisallow: /cut\n")) + "\n"
	body := head + pad + "Disallow: /cut\n" // exactly 500 KiB
	assert.Len(t, body, limit)
	r := robots.Parse([]byte(body))
	assert.False(t, r.Allowed("a", "/cut"), "the last line of 500 KiB is read")

	r = robots.Parse([]byte(body + "Disallow: /after\n"))
	assert.False(t, r.Allowed("a", "/cut"))
	assert.True(t, r.Allowed("a", "/after"), "nothing after 500 KiB is read")

	cut := head + pad + "Disallow: /cut-here" // the line crosses the limit
	r = robots.Parse([]byte(cut + strings.Repeat("x", 100) + "\n"))
	assert.True(t, r.Allowed("a", "/cut"), "a line cut by the limit is not read")
	assert.False(t, r.Allowed("a", "/first"))
}

func TestNil(t *testing.T) {
	var r *robots.Robots
	assert.True(t, r.Allowed("a", "/x"))
	d, ok := r.CrawlDelay("a")
	assert.Zero(t, d)
	assert.False(t, ok)
	assert.Nil(t, r.Sitemaps())
	assert.True(t, robots.Parse(nil).Allowed("a", "/x"))
}

// TestMatchNamesTheDecidingRule: Match agrees with Allowed and names the
// pattern of the rule that decided, in both readings of the User-agent
// lines.
func TestMatchNamesTheDecidingRule(t *testing.T) {
	const file = "User-agent: *\nDisallow: /private\nAllow: /private/open\n\nUser-agent: MJ12bot\nDisallow: /mj\n"
	tests := []struct {
		name, agent, uri string
		allowed          bool
		pattern          string
	}{
		{"a Disallow", "bot", "/private/x?q=secret", false, "/private"},
		{"a longer Allow", "bot", "/private/open/1", true, "/private/open"},
		{"no rule", "bot", "/public", true, ""},
		{"the whole-name reading", "MJ12bot", "/mj/1", false, "/mj"},
		{"robots.txt itself", "bot", "/robots.txt", true, ""},
	}
	r := robots.Parse([]byte(file))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allowed, pattern := r.Match(tt.agent, tt.uri)
			assert.Equal(t, tt.allowed, allowed)
			assert.Equal(t, tt.pattern, pattern)
			assert.Equal(t, r.Allowed(tt.agent, tt.uri), allowed)
		})
	}
}
