package robots

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/internal/heaptest"
)

func normalRule(s string) string { return string(appendNormal(nil, s, true)) }

// pathOf is requestPath without the byteSet.
func pathOf(uri string) string {
	p, _ := requestPath(uri)
	return p
}

func TestNormalRule(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/plain/path?q=1&r=2", "/plain/path?q=1&r=2"},
		{"/über-uns", "/%C3%BCber-uns"},
		{"/%c3%bcber-uns", "/%C3%BCber-uns"},
		{"/%C3%BCber-uns", "/%C3%BCber-uns"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"}, // RFC 9309's example
		{"/%7Euser", "/~user"},
		{"/a%2fb%3F", "/a%2Fb%3F"}, // reserved, in the path: stays escaped
		{"/a?b=%2f%3a%3f%40%26%3d", "/a?b=/:?@%26%3D"},
		{"/100%25", "/100%25"},
		{"/bad%2", "/bad%252"},
		{"/bad%zz", "/bad%25zz"},
		{"/%%34%31", "/%2541"}, // not "/%41", which would read as "/A"
		{"/*.pdf$", "/*.pdf$"},
		{"/a$b$", "/a%24b$"},
		{"/a%2A%2a%24", "/a%2A%2A%24"},
		{"/a b\"<>\\^`{|}", "/a%20b%22%3C%3E%5C%5E%60%7B%7C%7D"},
		{"/\x00\x7f", "/%00%7F"},
		{"", ""},
		// Google's TestMaybeEscapePattern.
		{"http://www.example.com", "http://www.example.com"},
		{"/a/b/c", "/a/b/c"},
		{"á", "%C3%A1"},
		{"%aa", "%AA"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, normalRule(tt.in), "normalRule(%q)", tt.in)
	}
}

func TestRequestPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/plain/path?q=1", "/plain/path?q=1"},
		{"/a*b$", "/a%2Ab%24"},
		{"/a/./b/../c", "/a/c"},
		{"/a/%2E/b/%2e%2E/c", "/a/c"},
		{"/a/b/..", "/a/"},
		{"/a/b/.", "/a/b/"},
		{"/a/b/..?x=/../y", "/a/?x=/../y"},
		{"/..", "/"},
		{"/../a", "/a"},
		{"/a//../b", "/a/b"},
		{"/./", "/"},
		{"/.../..a/a..", "/.../..a/a.."},
		// RFC 3986 section 5.2.4's examples, as absolute paths.
		{"/a/b/c/./../../g", "/a/g"},
		{"/mid/content=5/../6", "/mid/6"},
		// Google's TestGetPathParamsQuery, all alike but the last.
		{"", "/"},
		{"http://www.example.com", "/"},
		{"http://www.example.com/", "/"},
		{"http://www.example.com/a", "/a"},
		{"http://www.example.com/a/", "/a/"},
		{"http://www.example.com/a/b?c=http://d.e/", "/a/b?c=http://d.e/"},
		{"http://www.example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"example.com", "/"},
		{"example.com/", "/"},
		{"example.com/a", "/a"},
		{"example.com/a/", "/a/"},
		{"example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"a", "/"},
		{"a/", "/"},
		{"/a", "/a"},
		{"a/b", "/b"},
		{"example.com?a", "/?a"},
		{"example.com/a;b#c", "/a;b"},
		// Google reads "//a/b/c" as a host and a path, "/b/c"; an HTTP
		// client sends it as the path "//a/b/c", which it is here.
		{"//a/b/c", "//a/b/c"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, pathOf(tt.in), "requestPath(%q)", tt.in)
	}
}

func TestAllowedDoesNotAllocate(t *testing.T) {
	r := Parse([]byte(benchRobots))
	for _, uri := range []string{"/", "/shop/cart/checkout?step=2", "/a/b/c.html", "https://example.com/x/y?z"} {
		n := testing.AllocsPerRun(100, func() {
			r.Allowed("ExampleBot", uri)
			r.Allowed("OtherBot/", uri)
			r.CrawlDelay("examplebot")
		})
		assert.Zero(t, n, uri)
	}
}

// size is how many bytes r holds, headers included.
func size(r *Robots) int {
	n := int(unsafe.Sizeof(*r)) + len(r.text)
	n += cap(r.rules) * int(unsafe.Sizeof(rule{}))
	n += cap(r.groups) * int(unsafe.Sizeof(group{}))
	n += (cap(r.tokens) + cap(r.names)) * int(unsafe.Sizeof(member{}))
	n += cap(r.delays) * int(unsafe.Sizeof(time.Duration(0)))
	n += cap(r.sitemaps) * int(unsafe.Sizeof(""))
	return n
}

// maxSize is the bound the doc of Parse states: about four bytes per byte
// read, and a little more for a tiny file.
func maxSize(body []byte) int { return 4*min(len(body), maxBody) + 256 }

// hostileFiles are robots.txt files of about n bytes, each made to cost
// a naive parser or matcher much.
func hostileFiles(n int) map[string]string {
	fill := func(line func(i int) string) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(line(i))
		}
		return b.String()
	}
	return map[string]string{
		"one long wildcard rule": "User-agent: *\nDisallow: /" + strings.Repeat("*a", n/2) + "\n",
		"wildcard rules": "User-agent: *\n" + fill(func(i int) string {
			return fmt.Sprintf("Disallow: /*a*%d*b\n", i)
		}),
		"long segments": "User-agent: *\n" + fill(func(i int) string {
			return fmt.Sprintf("Disallow: /*%s%d\n", strings.Repeat("a", 60), i)
		}),
		"non-ASCII rules": "User-agent: *\nDisallow: /" + strings.Repeat("ü", n/2) + "\n",
		"many tokens":     fill(func(i int) string { return fmt.Sprintf("useragent t%x\n", i) }) + "disallow /\n",
		"many groups":     fill(func(i int) string { return "user-agent:\nallow:/\n" }),
		"shared groups": fill(func(i int) string {
			return fmt.Sprintf("user-agent: a\nuser-agent: b\nuser-agent: c%x\nallow: /%x\n", i, i)
		}),
		"sitemaps":    fill(func(i int) string { return "sitemap:x\n" }),
		"short rules": "User-agent: *\n" + fill(func(i int) string { return fmt.Sprintf("allow:/%06x\n", i) }),
	}
}

func TestSize(t *testing.T) {
	for name, body := range hostileFiles(maxBody) {
		t.Run(name, func(t *testing.T) {
			r := Parse([]byte(body))
			assert.LessOrEqual(t, size(r), maxSize([]byte(body)))

			// What the heap holds after Parse, allocator rounding included.
			held := heaptest.Held(func() { r = Parse([]byte(body)) })
			assert.LessOrEqual(t, held, int64(maxSize([]byte(body)))+64<<10, "heap held")
			runtime.KeepAlive(r)
		})
	}
}

// work returns the matching steps of checking uri against every file of
// hostileFiles(n).
func work(t *testing.T, n int, uri string) map[string]int {
	w := make(map[string]int)
	for name, body := range hostileFiles(n) {
		r := Parse([]byte(body))
		steps := 0
		r.allowed("bot", uri, &steps)
		w[name] = steps
	}
	return w
}

// TestHostileComplexity checks that the work of matching grows linearly
// with the file and with the URI, by counting it: doubling either at most
// doubles it (with some slack for the constant part).
func TestHostileComplexity(t *testing.T) {
	const n = 64 << 10
	uri := hostileURI(2000)
	base := work(t, n, uri)
	bigFile := work(t, 2*n, uri)
	longURI := work(t, n, uri+uri[1:])
	for name, w := range base {
		assert.LessOrEqual(t, bigFile[name], 2*w+100, "%s: twice the file", name)
		assert.LessOrEqual(t, longURI[name], 2*w+100, "%s: twice the URI", name)
		t.Logf("%s: %d steps; %d with twice the file; %d with twice the URI", name, w, bigFile[name], longURI[name])
	}

	// The whole 500 KiB, parsed and matched: linear work in the URI for
	// each rule, and a bound in time that only a blow-up would pass.
	start := time.Now()
	for name, body := range hostileFiles(maxBody) {
		r := Parse([]byte(body))
		steps := 0
		r.allowed("bot", uri, &steps)
		assert.LessOrEqual(t, steps, (len(r.rules)+2)*(len(pathOf(uri))+2), name)
	}
	assert.Less(t, time.Since(start), 30*time.Second, "parsing and matching every hostile file")
}

// hostileURI returns a URI of about n octets that holds every octet the
// rules of hostileFiles need, so that no shortcut skips their search.
func hostileURI(n int) string {
	return "/" + strings.Repeat("a", n) + "?" + strings.Repeat("ab0123456789", n/20) + "ü"
}

// refMatch is a plain dynamic-programming glob matcher, quadratic but
// obviously right, to check match against.
func refMatch(pat, path string) bool {
	anchored := strings.HasSuffix(pat, "$")
	pat = strings.TrimSuffix(pat, "$")
	// ok[j]: pat[:i] matches path[:j].
	ok := make([]bool, len(path)+1)
	ok[0] = true
	for i := 0; i < len(pat); i++ {
		next := make([]bool, len(path)+1)
		for j := 0; j <= len(path); j++ {
			switch {
			case pat[i] == '*':
				next[j] = ok[j] || j > 0 && next[j-1]
			case j > 0:
				next[j] = ok[j-1] && path[j-1] == pat[i]
			}
		}
		ok = next
	}
	if anchored {
		return ok[len(path)]
	}
	for _, b := range ok {
		if b {
			return true
		}
	}
	return false
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pat, path string
		want      bool
	}{
		{"/", "/", true},
		{"/a", "/ab", true},
		{"/a$", "/ab", false},
		{"/a$", "/a", true},
		{"/*", "/", true},
		{"/*$", "/x", true},
		{"/*b$", "/abab", true},
		{"/*b$", "/aba", false},
		{"/a*b*c", "/acb", false},
		{"/a*b*c", "/abc", true},
		{"/a**b", "/ab", true},
		{"*", "", true},
		{"$", "", true},
		{"/a*aa$", "/aa", false},
		{"/a*aa$", "/aaa", true},
		{"/*ab*ab$", "/abab", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, match(tt.pat, tt.path, nil), "match(%q, %q)", tt.pat, tt.path)
		assert.Equal(t, tt.want, refMatch(tt.pat, tt.path), "refMatch(%q, %q)", tt.pat, tt.path)
	}
}

// refAllowed is Allowed without its shortcuts: in each reading, every rule
// of the agent's groups is tried with refMatch, and the longest match
// decides; both readings must allow.
func refAllowed(r *Robots, agent, uri string) bool {
	path := pathOf(uri)
	if path == "/robots.txt" {
		return true
	}
	tokens, names := r.readings(agent)
	return refAllowedBy(r, tokens, path) && refAllowedBy(r, names, path)
}

func refAllowedBy(r *Robots, members []member, path string) bool {
	best, allow := -1, true
	for _, m := range members {
		g := r.groups[m.group]
		for _, x := range r.rules[g.lo:g.hi] {
			if refMatch(r.text[x.off:x.off+x.n], path) &&
				(int(x.n) > best || int(x.n) == best && x.allow) {
				best, allow = int(x.n), x.allow
			}
		}
	}
	return allow
}

// FuzzParse checks that Parse and the methods never panic, that a parsed
// file stays within the size its doc states, that a Crawl-delay is never
// negative, and that Allowed agrees with refAllowed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"User-agent: *\nDisallow: /\n",
		"\xEF\xBB\xBFuser-agent: a\r\nallow: /a*b$\r\ncrawl-delay: 1e300\rsitemap: x\n",
		"useragent a\ndisalow /%zz%2A*$\nuser-agent: * b\nAllow:\n",
		"user-agent: a\nuser-agent: a\ndisallow: /x\ndisallow: /x\nallow: /x\n",
		"User-Agent: *\xa0\n\u00a0Disallow\uff1a /lib\u00a0\u2002\nSitemaps x\xa0\nDisallow /voil\u00e0\n",
	} {
		f.Add([]byte(s), "a", "/a/../b%2e?c")
	}
	f.Fuzz(func(t *testing.T, body []byte, agent, uri string) {
		r := Parse(body)
		require.LessOrEqual(t, size(r), maxSize(body))
		got := r.Allowed(agent, uri)
		if len(body) < 2000 && len(uri) < 300 { // refMatch is quadratic
			require.Equal(t, refAllowed(r, agent, uri), got, "Allowed(%q, %q)", agent, uri)
		}
		d, _ := r.CrawlDelay(agent)
		require.GreaterOrEqual(t, d, time.Duration(0))
		r.Sitemaps()
		for _, g := range r.groups {
			rs := r.rules[g.lo:g.hi]
			for i := 1; i < len(rs); i++ {
				require.GreaterOrEqual(t, rs[i-1].n, rs[i].n, "rules longest first")
			}
		}
	})
}

// FuzzAllowed checks that the normal form of a URI or a rule is ASCII and
// stays as it is when normalised again, that requestPath gives a path,
// and that match agrees with refMatch.
func FuzzAllowed(f *testing.F) {
	for _, s := range [][2]string{
		{"/a*b$", "/ab"},
		{"/%2A", "/*"},
		{"/p$x$", "/p$x"},
		{"/*/../x", "/a/%2e%2E/x?y=%2f"},
		{"*.gif$", "http://h/a.gif#f"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, uri string) {
		path, set := requestPath(uri)
		require.True(t, strings.HasPrefix(path, "/"), "requestPath(%q) = %q", uri, path)
		require.Equal(t, path, pathOf(path), "requestPath is idempotent on %q", uri)
		require.Equal(t, byteSet(path), set, "the byteSet of requestPath(%q)", uri)
		for i := 0; i < len(path); i++ {
			require.Less(t, path[i], byte(0x80), "requestPath(%q) = %q: not ASCII", uri, path)
		}
		pat := normalRule(pattern)
		require.Equal(t, pat, normalRule(pat), "normalRule is idempotent on %q", pattern)
		if len(pat) > 200 || len(path) > 200 {
			return // refMatch is quadratic
		}
		require.Equal(t, refMatch(pat, path), match(pat, path, nil), "match(%q, %q)", pat, path)
	})
}

// FuzzTrim checks that trimming white space keeps a part of its input,
// is done once for all, and never cuts a UTF-8 sequence in two.
func FuzzTrim(f *testing.F) {
	for _, s := range []string{" \t/a\u00a0", "\xa0*\xa0", "/voil\u00e0", "\u3000\u2002x\u200b", "\xe2\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := trim(b)
		require.True(t, bytes.Contains(b, got))
		require.Equal(t, got, trim(got))
		if utf8.Valid(b) {
			require.True(t, utf8.Valid(got), "trim(%q) = %q", b, got)
		}
		if i := indexSpace(got); i >= 0 {
			require.Positive(t, leadingSpace(got[i:]))
		}
	})
}
