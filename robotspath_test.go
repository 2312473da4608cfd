package polite

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRobotsPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/plain/path?q=1&r=2", "/plain/path?q=1&r=2"},
		{"/über-uns", "/%C3%BCber-uns"},
		{"/%c3%bcber-uns", "/%C3%BCber-uns"},
		{"/%C3%BCber-uns", "/%C3%BCber-uns"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"}, // RFC 9309's example
		{"/%7Euser", "/~user"},
		{"/a%2fb%3F", "/a%2Fb%3F"}, // reserved: stays escaped
		{"/100%25", "/100%25"},
		{"/bad%2", "/bad%252"},
		{"/bad%zz", "/bad%25zz"},
		{"/%%34%31", "/%2541"}, // not "/%41", which would read as "/A"
		{"/*.pdf$", "/*.pdf$"},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, robotsPath(tt.in), "robotsPath(%q)", tt.in)
	}
}

func TestCanonicalRules(t *testing.T) {
	in := "User-agent: *\n" +
		"Disallow: /über # the about page, /über\n" +
		"allow:\t/%7euser/ \r\n" +
		"Sitemap: https://example.com/ü.xml\n" +
		"Disallow:\n" +
		"Disallow: /naïve"
	want := "User-agent: *\n" +
		"Disallow: /%C3%BCber # the about page, /über\n" +
		"allow:\t/~user/ \r\n" +
		"Sitemap: https://example.com/ü.xml\n" +
		"Disallow:\n" +
		"Disallow: /na%C3%AFve"
	assert.Equal(t, want, string(canonicalRules([]byte(in))))

	plain := []byte("User-agent: *\nDisallow: /private\n")
	assert.Same(t, &plain[0], &canonicalRules(plain)[0], "a file with nothing to rewrite is not copied")
}

// FuzzRobotsPath checks that robotsPath is idempotent, yields ASCII only,
// and changes nothing in a path without '%' or non-ASCII octets.
func FuzzRobotsPath(f *testing.F) {
	for _, s := range []string{"/über", "/%7e", "/%c3%bc", "/a%2", "/%%41", "/plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got := robotsPath(p)
		assert.Equal(t, got, robotsPath(got), "idempotent")
		for i := 0; i < len(got); i++ {
			if got[i] >= 0x80 {
				t.Fatalf("robotsPath(%q) = %q: not ASCII", p, got)
			}
		}
		if !needsCanonical(p) {
			assert.Equal(t, p, got)
		}
	})
}
