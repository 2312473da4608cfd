package robots_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/robots"
)

// TestWhiteSpace checks that the white space a reader does not see around a
// value or a User-agent name is trimmed: ASCII, Unicode and a Latin-1
// no-break space. The first three files are lines of real sites (issue 44),
// which polite once read with the space as part of the value.
func TestWhiteSpace(t *testing.T) {
	tests := []struct {
		name, robots, agent, uri string
		want                     bool
	}{
		{"an en space after a rule (a real line)", "User-agent: *\nDisallow: /members\u2002\n", "a", "/members", false},
		{"a no-break space after a rule (a real line)", "User-agent: *\nDisallow: /lib\u00a0\n", "a", "/librar", false},
		{"a Latin-1 no-break space after * (a real line)", "User-Agent: *\xa0\nDisallow: /\n", "a", "/x", false},
		{"a Latin-1 no-break space after a rule", "User-agent: *\nDisallow: /lib\xa0\n", "a", "/librar", false},
		{"an ideographic space before a rule", "User-agent: *\nDisallow:\u3000/lib\n", "a", "/librar", false},
		{"a zero width space after a rule", "User-agent: *\nDisallow: /lib\u200b\n", "a", "/librar", false},
		{"spaces of each kind after a rule", "User-agent: *\nDisallow: /lib \u00a0\t\u2009\xa0\u202f # comment\n", "a", "/librar", false},
		{"a no-break space before a key", "User-agent: *\n\u00a0Disallow: /lib\n", "a", "/librar", false},
		{"a no-break space before a colon", "User-agent: *\nDisallow\u00a0: /lib\n", "a", "/librar", false},
		{"a no-break space instead of a colon", "User-agent: *\nDisallow\u00a0/lib\n", "a", "/librar", false},
		{"a no-break space after a name", "User-agent: a\u00a0\nDisallow: /\n", "a", "/x", false},
		{"a Latin-1 no-break space after a name", "User-agent: a\xa0\nDisallow: /\n", "a", "/x", false},
		{"a no-break space after a name and version", "User-agent: a/1.0\u00a0\nDisallow: /\n", "a", "/x", false},
		{"a name and more words, a no-break space between", "User-agent: ab\u00a0images\nDisallow: /\n", "ab", "/x", false},
		{"the Latin-1 space ends no other agent's group", "User-Agent: *\xa0\nDisallow: /\n\nUser-agent: b\nAllow: /\n", "b", "/x", true},
		{"an à is no space", "User-agent: *\nDisallow: /voil\u00e0\n", "a", "/voil", true},
		{"an à is no space: it is matched", "User-agent: *\nDisallow: /voil\u00e0\n", "a", "/voil%C3%A0", false},
		{"a space inside a rule stays", "User-agent: *\nDisallow: /a\u00a0b\n", "a", "/a", true},
		{"a colon in the value of a line without one", "User-agent: *\nDisallow /a:b\n", "a", "/a:b", false},
		{"a full-width colon", "User-agent: *\nDisallow\uff1a/private\n", "a", "/private/x", false},
		{"a full-width colon and spaces", "User-agent\uff1a *\nDisallow \uff1a /private\n", "a", "/private/x", false},
		{"a full-width colon after an ASCII one is in the value", "User-agent: *\nDisallow: /a\uff1ab\n", "a", "/a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, robots.Parse([]byte(tt.robots)).Allowed(tt.agent, tt.uri))
		})
	}
}

// TestSitemapsAsWritten checks Sitemap lines as real files write them, which
// Google's parser reads and polite once missed: white space around the key
// and the value, a key that only starts with "Sitemap", and a line without
// its colon, whose URL holds one.
func TestSitemapsAsWritten(t *testing.T) {
	const url = "https://a.example/sitemap.xml"
	tests := []struct{ name, robots string }{
		{"a no-break space before the value", "Sitemap:\u00a0" + url + "\n"},
		{"a Latin-1 no-break space before the value", "Sitemap:\xa0" + url + "\n"},
		{"a no-break space after the value", "Sitemap: " + url + "\u00a0\n"},
		{"a no-break space before the key", "\u00a0Sitemap: " + url + "\n"},
		{"an en space before the colon", "Sitemap\u2002: " + url + "\n"},
		{"Sitemaps", "Sitemaps: " + url + "\n"},
		{"Sitemap_index", "sitemap_index: " + url + "\n"},
		{"Site-map-xml", "Site-map-xml: " + url + "\n"},
		{"no colon", "Sitemap " + url + "\n"},
		{"a full-width colon", "Sitemap\uff1a " + url + "\n"},
		{"a full-width colon, no space", "Sitemap\uff1a" + url + "\n"},
		{"no colon, in a group", "User-agent: *\nDisallow: /x\nSitemap " + url + "\n"},
		{"a byte order mark before the file", "\xEF\xBB\xBFSitemap: " + url + "\n"},
		{"CR line ends", "User-agent: *\rDisallow: /x\rSITEMAP: " + url + "\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, []string{url}, robots.Parse([]byte(tt.robots)).Sitemaps())
		})
	}
	assert.Empty(t, robots.Parse([]byte("Sitemap https://a.example/1.xml https://a.example/2.xml\n")).Sitemaps(),
		"three words without a colon are no line")
	assert.Empty(t, robots.Parse([]byte("Sitemap \u00a0\n")).Sitemaps(), "only white space is no value")
}
