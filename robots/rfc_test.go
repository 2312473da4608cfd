package robots_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/robots"
)

type rfcCase struct {
	robots, agent, uri string
	want               bool
}

// The example file of RFC 9309 section 5.1, "EOF" line included.
const rfcExample = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`

// rfcTests holds the examples of RFC 9309, and what its sections say in
// words, by section.
func rfcTests() []struct {
	section string
	cases   []rfcCase
} {
	type c = rfcCase
	const merge = "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n"
	const fallback = "user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n"
	const longest = "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"

	// Section 2.5: a rule at the end of 499 KiB is read.
	filler := strings.Repeat("# "+strings.Repeat("x", 1020)+"\n", 499)
	big := "User-agent: *\n" + filler + "Disallow: /late\n"

	return []struct {
		section string
		cases   []rfcCase
	}{
		{"2.1 groups", []c{
			{"user-agent: a\nuser-agent: b\ndisallow: /x\n", "b", "/x", false},
			{"user-agent: a\n\nuser-agent: b\ndisallow: /x\n", "a", "/x", false},
			// The last group may have no rules: it allows everything.
			{"user-agent: *\ndisallow: /\nuser-agent: a\n", "a", "/x", true},
		}},
		{"2.2.1 product token", []c{
			{"user-agent: ExampleBot\ndisallow: /\n", "ExampleBot", "/x", false},
			{"user-agent: ExampleBot\ndisallow: /\n", "examplebot", "/x", false},
			{"user-agent: examplebot\ndisallow: /\n", "EXAMPLEBOT", "/x", false},
			{"user-agent: ExampleBot\ndisallow: /\n", "Example", "/x", true},
			{"user-agent: ExampleBot\ndisallow: /\n", "ExampleBotX", "/x", true},
			// Groups for the same token are merged.
			{merge, "ExampleBot", "/foo", false},
			{merge, "ExampleBot", "/bar", false},
			{merge, "ExampleBot", "/baz", false},
			{merge, "ExampleBot", "/qux", true},
			// With no group of its own, a crawler obeys "*".
			{fallback, "ExampleBot", "/foo", false},
			{fallback, "ExampleBot", "/bar", false},
			{fallback, "ExampleBot", "/baz", true},
			{fallback, "BazBot", "/foo", true},
			{fallback, "BazBot", "/baz", false},
			// No group and no "*": no rules apply.
			{"user-agent: BazBot\ndisallow: /\n", "ExampleBot", "/baz", true},
		}},
		{"2.2.2 allow and disallow", []c{
			{"user-agent: *\ndisallow: /x\n", "a", "/x/y", false}, // from the first octet
			{"user-agent: *\ndisallow: /x\n", "a", "/y/x", true},
			{"user-agent: *\ndisallow: /X\n", "a", "/x", true}, // case sensitive
			{"user-agent: *\ndisallow: /x\nallow: /x/y\n", "a", "/x/y", true},
			{"user-agent: *\nallow: /x\ndisallow: /x/y\n", "a", "/x/y", false},
			{"user-agent: *\ndisallow: /x\nallow: /x\n", "a", "/x", true}, // equivalent: allow
			{"user-agent: *\nallow: /x\ndisallow: /x\n", "a", "/x", true},
			{"user-agent: a\ndisallow: /x\n", "a", "/y", true}, // no match
			{"user-agent: *\ndisallow: /\nuser-agent: a\n", "a", "/y", true},
			{"user-agent: *\ndisallow: /\n", "a", "/robots.txt", true},
			{"disallow: /\nuser-agent: *\ndisallow: /x\n", "a", "/y", true}, // outside any group
		}},
		{"2.2.3 special characters", []c{
			{"user-agent: *\ndisallow: /\nallow: / # comment in line\n", "a", "/x", true},
			{"user-agent: *\n# comment on its own line\ndisallow: /\n", "a", "/x", false},
			{"user-agent: *\ndisallow: /this/path/exactly$\n", "a", "/this/path/exactly", false},
			{"user-agent: *\ndisallow: /this/path/exactly$\n", "a", "/this/path/exactly/", true},
			{"user-agent: *\ndisallow: /this/*/exactly\n", "a", "/this/a/b/exactly", false},
			{"user-agent: *\ndisallow: /this/*/exactly\n", "a", "/this/exactly", true},
			{"user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", "a", "https://www.example.com/path/file-with-a-*.html", false},
			{"user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", "a", "https://www.example.com/path/file-with-a-x.html", true},
			{"user-agent: *\ndisallow: /path/foo-%24\n", "a", "https://www.example.com/path/foo-$", false},
			{"user-agent: *\ndisallow: /path/foo-%24\n", "a", "https://www.example.com/path/foo-", true},
		}},
		{"2.2.4 other records", []c{
			// A Sitemap line does not end a group.
			{"user-agent: a\nsitemap: https://example.com/s.xml\nuser-agent: b\ndisallow: /\n", "a", "/x", false},
		}},
		{"2.5 limits", []c{
			{big, "a", "/late", false},
			{big, "a", "/early", true},
		}},
		{"5.1 simple example", []c{
			{rfcExample, "otherbot", "/publications/a", true},
			{rfcExample, "otherbot", "/example/a", false},
			{rfcExample, "otherbot", "/a.gif", false},
			{rfcExample, "otherbot", "/a/b.gif", false},
			{rfcExample, "otherbot", "/a.gif?x=1", true},
			{rfcExample, "otherbot", "/a.png", true},
			{rfcExample, "otherbot", "/publications/a.gif", true}, // "/publications/" is longer than "*.gif$"
			{rfcExample, "foobot", "/example/page.html", true},
			{rfcExample, "foobot", "/example/allowed.gif", true},
			{rfcExample, "foobot", "/", false},
			{rfcExample, "foobot", "/example/", false},
			{rfcExample, "foobot", "/publications/a", false},
			{rfcExample, "barbot", "/example/page.html", false},
			{rfcExample, "bazbot", "/example/page.html", false},
			{rfcExample, "barbot", "/example/other.html", true},
			{rfcExample, "bazbot", "/a.gif", true},
			{rfcExample, "quxbot", "/example/page.html", true},
			{rfcExample, "quxbot", "/a.gif", true},
			{rfcExample, "quxbot", "/", true},
		}},
		{"5.2 longest match", []c{
			{longest, "foobot", "/example/page/disallowed.gif", false},
			{longest, "foobot", "/example/page/other.gif", true},
			// The section's prose names the URI ".../disallow.gif", which
			// the Disallow rule does not match: the Allow applies.
			{longest, "foobot", "example.com/example/page/disallow.gif", true},
		}},
	}
}

func TestRFC9309(t *testing.T) {
	n := 0
	for _, tt := range rfcTests() {
		t.Run(tt.section, func(t *testing.T) {
			for i, c := range tt.cases {
				r := robots.Parse([]byte(c.robots))
				assert.Equal(t, c.want, r.Allowed(c.agent, c.uri), "case %d: Allowed(%q, %q)", i, c.agent, c.uri)
			}
		})
		n += len(tt.cases)
	}
	t.Logf("RFC 9309 cases: %d", n)
}

// TestRFC9309Encoding checks the table of RFC 9309 section 2.2.2: the
// three forms of each row, as a rule and as a URI, match one another.
func TestRFC9309Encoding(t *testing.T) {
	rows := [][3]string{ // path, encoded path, path to match
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"},
		{"/foo/bar/\u30c4", "/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/%62%61%7A", "/foo/bar/baz"},
	}
	for _, row := range rows {
		t.Run(row[0], func(t *testing.T) {
			for _, rule := range row {
				for _, uri := range row {
					for _, end := range []string{"", "$"} {
						r := robots.Parse([]byte("user-agent: *\ndisallow: " + rule + end + "\n"))
						assert.False(t, r.Allowed("a", uri), "rule %q, URI %q", rule+end, uri)
						assert.True(t, r.Allowed("a", "/foo/baz"), "rule %q matches no other path", rule+end)
					}
				}
			}
		})
	}
}
