package robots_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/robots"
)

// googleCase is one EXPECT_TRUE or EXPECT_FALSE of IsUserAgentAllowed in
// Google's robots_test.cc (github.com/google/robotstxt).
type googleCase struct {
	robots, agent, url string
	want               bool // our answer; Google's too, unless differs is set
	// differs, if set, says why Google answers !want here: one of the
	// deliberate differences listed in the package doc.
	differs string
}

const (
	diffEncoding  = "ID_Encoding: the URI is percent-normalised as the rules are (RFC 9309 section 2.2.2); Google compares it as given"
	diffIndexHTML = "GoogleOnly_IndexHTMLisDirectory: Allow: /dir/index.html does not allow /dir/ (no such rule in RFC 9309)"
	diffLineLen   = "GoogleOnly_LineTooLong: lines are read whole; Google cuts them after 16,664 octets"
)

// googleTests holds every case of robots_test.cc that asks whether a URL is
// allowed, under the name of its TEST.
func googleTests() []struct {
	name  string
	cases []googleCase
} {
	type c = googleCase
	const fooDisallowAll = "user-agent: FooBot\n" +
		"disallow: /\n"
	const groups = "allow: /foo/bar/\n" +
		"\n" +
		"user-agent: FooBot\n" +
		"disallow: /\n" +
		"allow: /x/\n" +
		"user-agent: BarBot\n" +
		"disallow: /\n" +
		"allow: /y/\n" +
		"\n" +
		"\n" +
		"allow: /w/\n" +
		"user-agent: BazBot\n" +
		"\n" +
		"user-agent: FooBot\n" +
		"allow: /z/\n" +
		"disallow: /\n"
	const otherRules1 = "User-agent: BarBot\n" +
		"Sitemap: https://foo.bar/sitemap\n" +
		"User-agent: *\n" +
		"Disallow: /\n"
	const otherRules2 = "User-agent: FooBot\n" +
		"Invalid-Unknown-Line: unknown\n" +
		"User-agent: *\n" +
		"Disallow: /\n"
	const namesUpper = "USER-AGENT: FooBot\n" +
		"ALLOW: /x/\n" +
		"DISALLOW: /\n"
	const namesLower = "user-agent: FooBot\n" +
		"allow: /x/\n" +
		"disallow: /\n"
	const namesCamel = "uSeR-aGeNt: FooBot\n" +
		"AlLoW: /x/\n" +
		"dIsAlLoW: /\n"
	const uaUpper = "User-Agent: FOO BAR\n" +
		"Allow: /x/\n" +
		"Disallow: /\n"
	const uaLower = "User-Agent: foo bar\n" +
		"Allow: /x/\n" +
		"Disallow: /\n"
	const uaCamel = "User-Agent: FoO bAr\n" +
		"Allow: /x/\n" +
		"Disallow: /\n"
	const upToSpace = "User-Agent: *\n" +
		"Disallow: /\n" +
		"User-Agent: Foo Bar\n" +
		"Allow: /x/\n" +
		"Disallow: /\n"
	const global = "user-agent: *\n" +
		"allow: /\n" +
		"user-agent: FooBot\n" +
		"disallow: /\n"
	const onlySpecific = "user-agent: FooBot\n" +
		"allow: /\n" +
		"user-agent: BarBot\n" +
		"disallow: /\n" +
		"user-agent: BazBot\n" +
		"disallow: /\n"
	const page = "http://foo.bar/x/page.html"
	const indexHTML = "User-Agent: *\n" +
		"Allow: /allowed-slash/index.html\n" +
		"Disallow: /\n"

	// GoogleOnly_LineTooLong builds its lines around Google's line limit.
	const maxLineLen = 2083 * 8
	long := "/x/" + strings.Repeat("a", maxLineLen-len("/x/")-len("disallow: ")+1-len("/x/"))
	longRobots := "user-agent: FooBot\n" + "disallow: " + long + "/qux\n"
	n := maxLineLen - len("/x/") - len("allow: ") + 1 - len("/x/")
	longA, longB := "/x/"+strings.Repeat("a", n), "/x/"+strings.Repeat("b", n)
	longRobots2 := "user-agent: FooBot\n" +
		"disallow: /\n" +
		"allow: " + longA + "/qux\n" +
		"allow: " + longB + "/qux\n"

	doc := func(allow string) string {
		return "user-agent: FooBot\n" +
			"disallow: /\n" +
			"allow: " + allow + "\n"
	}

	return []struct {
		name  string
		cases []googleCase
	}{
		{"GoogleOnly_SystemTest", []c{
			{"", "FooBot", "", true, ""},              // empty robots.txt: everything allowed
			{fooDisallowAll, "", "", true, ""},        // empty user-agent: everything allowed
			{fooDisallowAll, "FooBot", "", false, ""}, // empty URL: "/"
			{"", "", "", true, ""},
		}},
		{"ID_LineSyntax_Line", []c{
			{"user-agent: FooBot\ndisallow: /\n", "FooBot", "http://foo.bar/x/y", false, ""},
			{"foo: FooBot\nbar: /\n", "FooBot", "http://foo.bar/x/y", true, ""},
			{"user-agent FooBot\ndisallow /\n", "FooBot", "http://foo.bar/x/y", false, ""},
		}},
		{"ID_LineSyntax_Groups", []c{
			{groups, "FooBot", "http://foo.bar/x/b", true, ""},
			{groups, "FooBot", "http://foo.bar/z/d", true, ""},
			{groups, "FooBot", "http://foo.bar/y/c", false, ""},
			{groups, "BarBot", "http://foo.bar/y/c", true, ""},
			{groups, "BarBot", "http://foo.bar/w/a", true, ""},
			{groups, "BarBot", "http://foo.bar/z/d", false, ""},
			{groups, "BazBot", "http://foo.bar/z/d", true, ""},
			// Lines with rules outside groups are ignored.
			{groups, "FooBot", "http://foo.bar/foo/bar/", false, ""},
			{groups, "BarBot", "http://foo.bar/foo/bar/", false, ""},
			{groups, "BazBot", "http://foo.bar/foo/bar/", false, ""},
		}},
		{"ID_LineSyntax_Groups_OtherRules", []c{
			{otherRules1, "FooBot", "http://foo.bar/", false, ""},
			{otherRules1, "BarBot", "http://foo.bar/", false, ""},
			{otherRules2, "FooBot", "http://foo.bar/", false, ""},
			{otherRules2, "BarBot", "http://foo.bar/", false, ""},
		}},
		{"ID_REPLineNamesCaseInsensitive", []c{
			{namesUpper, "FooBot", "http://foo.bar/x/y", true, ""},
			{namesLower, "FooBot", "http://foo.bar/x/y", true, ""},
			{namesCamel, "FooBot", "http://foo.bar/x/y", true, ""},
			{namesUpper, "FooBot", "http://foo.bar/a/b", false, ""},
			{namesLower, "FooBot", "http://foo.bar/a/b", false, ""},
			{namesCamel, "FooBot", "http://foo.bar/a/b", false, ""},
		}},
		{"ID_UserAgentValueCaseInsensitive", []c{
			{uaUpper, "Foo", "http://foo.bar/x/y", true, ""},
			{uaLower, "Foo", "http://foo.bar/x/y", true, ""},
			{uaCamel, "Foo", "http://foo.bar/x/y", true, ""},
			{uaUpper, "Foo", "http://foo.bar/a/b", false, ""},
			{uaLower, "Foo", "http://foo.bar/a/b", false, ""},
			{uaCamel, "Foo", "http://foo.bar/a/b", false, ""},
			{uaUpper, "foo", "http://foo.bar/x/y", true, ""},
			{uaLower, "foo", "http://foo.bar/x/y", true, ""},
			{uaCamel, "foo", "http://foo.bar/x/y", true, ""},
			{uaUpper, "foo", "http://foo.bar/a/b", false, ""},
			{uaLower, "foo", "http://foo.bar/a/b", false, ""},
			{uaCamel, "foo", "http://foo.bar/a/b", false, ""},
		}},
		{"GoogleOnly_AcceptUserAgentUpToFirstSpace", []c{
			{upToSpace, "Foo", "http://foo.bar/x/y", true, ""},
			{upToSpace, "Foo Bar", "http://foo.bar/x/y", false, ""},
		}},
		{"ID_GlobalGroups_Secondary", []c{
			{"", "FooBot", "http://foo.bar/x/y", true, ""},
			{global, "FooBot", "http://foo.bar/x/y", false, ""},
			{global, "BarBot", "http://foo.bar/x/y", true, ""},
			{onlySpecific, "QuxBot", "http://foo.bar/x/y", true, ""},
		}},
		{"ID_AllowDisallow_Value_CaseSensitive", []c{
			{"user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/y", false, ""},
			{"user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://foo.bar/x/y", true, ""},
		}},
		{"ID_LongestMatch", []c{
			{"user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", page, false, ""},
			{"user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", page, true, ""},
			{"user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/", false, ""},
			// Equivalent disallow and allow patterns: allow is used.
			{"user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", page, true, ""},
			{"user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", page, true, ""},
			{"user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x", false, ""},
			{"user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x/", true, ""},
			{"user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", page, true, ""},
			// Longest match wins.
			{"user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page.html", false, ""},
			{"user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page", true, ""},
			{"user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", page, true, ""},
			{"user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://foo.bar/x/y.html", false, ""},
			// The most specific group for FooBot allows /x/page implicitly.
			{"User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/x/page", true, ""},
			{"User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/y/page", false, ""},
		}},
		{"ID_Encoding", []c{
			{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n",
				"FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true, ""},
			// 3-octet character: /foo/bar/ツ -> /foo/bar/%E3%83%84
			{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true, ""},
			{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/ツ", true, diffEncoding},
			{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true, ""},
			{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://foo.bar/foo/bar/ツ", true, diffEncoding},
			// Percent-encoded unreserved ASCII: RFC 9309's own table makes
			// /foo/bar/%62%61%7A the path /foo/bar/baz.
			{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/baz", true, diffEncoding},
			{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/%62%61%7A", true, ""},
		}},
		{"ID_SpecialCharacters", []c{
			{"User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/bar/quz", false, ""},
			{"User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/quz", true, ""},
			{"User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo//quz", true, ""},
			{"User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://foo.bar/foo/bax/quz", true, ""},
			{"User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar", false, ""},
			{"User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/qux", true, ""},
			{"User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/", true, ""},
			{"User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://foo.bar/foo/bar/baz", true, ""},
			{"User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://foo.bar/foo/bar", true, ""},
			{"User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://foo.bar/foo/quz", false, ""},
		}},
		{"GoogleOnly_IndexHTMLisDirectory", []c{
			{indexHTML, "foobot", "http://foo.com/allowed-slash/", false, diffIndexHTML},
			{indexHTML, "foobot", "http://foo.com/allowed-slash/index.htm", false, ""},
			{indexHTML, "foobot", "http://foo.com/allowed-slash/index.html", true, ""},
			{indexHTML, "foobot", "http://foo.com/anyother-url", false, ""},
		}},
		{"GoogleOnly_LineTooLong", []c{
			{longRobots, "FooBot", "http://foo.bar/fux", true, ""},
			// Google's cut rule is long+"/", which matches; the whole rule,
			// long+"/qux", does not.
			{longRobots, "FooBot", "http://foo.bar" + long + "/fux", true, diffLineLen},
			{longRobots2, "FooBot", "http://foo.bar/", false, ""},
			{longRobots2, "FooBot", "http://foo.bar" + longA + "/qux", true, ""},
			// Google's cut Allow, longB+"/", allows what the file does not.
			{longRobots2, "FooBot", "http://foo.bar" + longB + "/fux", false, diffLineLen},
		}},
		{"GoogleOnly_DocumentationChecks", []c{
			{doc("/fish"), "FooBot", "http://foo.bar/bar", false, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/fish", true, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/fish.html", true, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/fish/salmon.html", true, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/fishheads", true, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/fishheads/yummy.html", true, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/fish.html?id=anything", true, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/Fish.asp", false, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/catfish", false, ""},
			{doc("/fish"), "FooBot", "http://foo.bar/?id=fish", false, ""},
			// "/fish*" equals "/fish".
			{doc("/fish*"), "FooBot", "http://foo.bar/bar", false, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/fish", true, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/fish.html", true, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/fish/salmon.html", true, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/fishheads", true, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/fishheads/yummy.html", true, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/fish.html?id=anything", true, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/Fish.bar", false, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/catfish", false, ""},
			{doc("/fish*"), "FooBot", "http://foo.bar/?id=fish", false, ""},
			// "/fish/" does not equal "/fish".
			{doc("/fish/"), "FooBot", "http://foo.bar/bar", false, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/fish/", true, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/fish/salmon", true, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/fish/?salmon", true, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/fish/salmon.html", true, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/fish/?id=anything", true, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/fish", false, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/fish.html", false, ""},
			{doc("/fish/"), "FooBot", "http://foo.bar/Fish/Salmon.html", false, ""},
			// "/*.php"
			{doc("/*.php"), "FooBot", "http://foo.bar/bar", false, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/filename.php", true, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/folder/filename.php", true, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/folder/filename.php?parameters", true, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar//folder/any.php.file.html", true, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/filename.php/", true, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/index?f=filename.php/", true, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/php/", false, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/index?php", false, ""},
			{doc("/*.php"), "FooBot", "http://foo.bar/windows.PHP", false, ""},
			// "/*.php$"
			{doc("/*.php$"), "FooBot", "http://foo.bar/bar", false, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/filename.php", true, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/folder/filename.php", true, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/filename.php?parameters", false, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/filename.php/", false, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/filename.php5", false, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/php/", false, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/filename?php", false, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar/aaaphpaaa", false, ""},
			{doc("/*.php$"), "FooBot", "http://foo.bar//windows.PHP", false, ""},
			// "/fish*.php"
			{doc("/fish*.php"), "FooBot", "http://foo.bar/bar", false, ""},
			{doc("/fish*.php"), "FooBot", "http://foo.bar/fish.php", true, ""},
			{doc("/fish*.php"), "FooBot", "http://foo.bar/fishheads/catfish.php?parameters", true, ""},
			{doc("/fish*.php"), "FooBot", "http://foo.bar/Fish.PHP", false, ""},
			// Order of precedence for group-member records.
			{"user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "http://example.com/page", true, ""},
			{"user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "http://example.com/folder/page", true, ""},
			{"user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot", "http://example.com/page.htm", false, ""},
			{"user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/", true, ""},
			{"user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/page.html", false, ""},
		}},
	}
}

// requestTarget turns one of Google's URLs into the request target an
// HTTP client sends: what follows the host, or "/".
func requestTarget(url string) string {
	rest := url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return "/"
}

func TestGoogle(t *testing.T) {
	var ported, differ int
	for _, tt := range googleTests() {
		t.Run(tt.name, func(t *testing.T) {
			for i, c := range tt.cases {
				r := robots.Parse([]byte(c.robots))
				target := requestTarget(c.url)
				// Long cases are shown by their length, not their text.
				show := target
				if len(show) > 80 {
					show = show[:40] + "..." + show[len(show)-20:]
				}
				assert.Equal(t, c.want, r.Allowed(c.agent, target),
					"case %d: %s: Allowed(%q, %q)", i, tt.name, c.agent, show)
				assert.Equal(t, c.want, r.Allowed(c.agent, c.url),
					"case %d: %s: the whole URL gives the same answer", i, tt.name)
			}
		})
		for _, c := range tt.cases {
			ported++
			if c.differs != "" {
				differ++
			}
		}
	}
	t.Logf("Google cases: %d ported, %d as Google answers, %d deliberate differences", ported, ported-differ, differ)
	require.Equal(t, 145, ported, "every IsUserAgentAllowed case of robots_test.cc")
	require.Equal(t, 6, differ, "the differences the package doc lists")
}

// TestGoogleParse ports the tests of robots_test.cc that count what the
// parser reports rather than ask about a URL: each file is checked here by
// the answers its rules give.
func TestGoogleParse(t *testing.T) {
	t.Run("ID_LinesNumbersAreCountedCorrectly", func(t *testing.T) {
		files := []struct{ name, body string }{
			{"unix", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n"},
			{"dos", "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n"},
			{"mac", "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r"},
			{"no final EOL", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /"},
			{"mixed", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /"},
		}
		for _, f := range files {
			t.Run(f.name, func(t *testing.T) {
				r := robots.Parse([]byte(f.body))
				// Four directives in two groups: bar is disallowed
				// everywhere, foo has only an Allow.
				assert.False(t, r.Allowed("bar", "/x"))
				assert.True(t, r.Allowed("foo", "/x"))
				assert.True(t, r.Allowed("baz", "/x"))
			})
		}
	})
	t.Run("ID_UTF8ByteOrderMarkIsSkipped", func(t *testing.T) {
		// Google's files end with "Allow: /AnyValue", which no answer can
		// tell from no line at all; a Disallow shows whether it was read.
		tests := []struct {
			name, body string
			read       bool // the Disallow line was read in foo's group
		}{
			{"full BOM", "\xEF\xBB\xBFUser-Agent: foo\nDisallow: /AnyValue\n", true},
			{"partial BOM, 2 octets", "\xEF\xBBUser-Agent: foo\nDisallow: /AnyValue\n", true},
			{"partial BOM, 1 octet", "\xEFUser-Agent: foo\nDisallow: /AnyValue\n", true},
			{"broken BOM", "\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n", false},
			{"BOM in the middle", "User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n", false},
		}
		for _, tt := range tests {
			r := robots.Parse([]byte(tt.body))
			assert.Equal(t, !tt.read, r.Allowed("foo", "/AnyValue"), tt.name)
		}
	})
	t.Run("ID_NonStandardLineExample_Sitemap", func(t *testing.T) {
		const groups = "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n"
		const sitemap = "http://foo.bar/sitemap.xml"
		for _, body := range []string{
			groups + "Sitemap: " + sitemap + "\n",
			"Sitemap: " + sitemap + "\n" + groups, // anywhere in the file
		} {
			assert.Equal(t, []string{sitemap}, robots.Parse([]byte(body)).Sitemaps())
		}
	})
}
