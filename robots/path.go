package robots

import "strings"

// This file puts request URIs and rule paths in the one form they are
// compared in (RFC 9309 section 2.2.2, RFC 3986 section 6.2.2):
//
//   - octets outside printable ASCII, and the ASCII octets a URI may not
//     hold (space, '"', '<', '>', '\', '^', '`', '{', '|', '}'), are
//     percent-encoded;
//   - a percent-encoded unreserved character (ALPHA, DIGIT, '-', '.', '_',
//     '~') is decoded, and the hex digits of every other escape are upper
//     case;
//   - in the query (after the first '?'), the escapes of ':', '/', '?' and
//     '@' are decoded too: RFC 3986 section 3.4 lets these stand for data
//     in a query, where they delimit nothing, and RFC 9309's own table
//     matches "?baz=https://foo.bar" with "?baz=https%3A%2F%2Ffoo.bar". A
//     rule's query is what follows its first '?': in a rule without one,
//     such as "/*x=%2F", the escape stays, and matches only a "%2F" that a
//     URI holds in its path;
//   - a '%' that starts no escape is a literal one, "%25";
//   - in a URI, '*' and '$' are data, "%2A" and "%24"; in a rule, '*' is
//     the wildcard and a final '$' the end anchor, while "%2A", "%24" and a
//     '$' that is not last stand for the characters themselves.
//
// The path of a URI then loses its dot segments (RFC 3986 section 5.2.4),
// so that "/a/../b", "/a/%2E%2E/b" and "/b" are one path.

// escapes marks the octets that are percent-encoded wherever they stand,
// '%' itself included (an escape is handled before the table is read).
var escapes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c <= ' ' || c >= 0x7F
	}
	for _, c := range []byte("\"#%<>\\^`{|}") {
		t[c] = true
	}
	return t
}()

// appendNormal appends s in its compared form to dst. If rule is set, s is
// a rule's path and '*' and a final '$' keep their special meaning.
func appendNormal[S ~string | ~[]byte](dst []byte, s S, rule bool) []byte {
	inQuery := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) || inQuery && isQueryData(v) {
				dst = append(dst, v)
			} else {
				dst = appendEscape(dst, v)
			}
			i += 2
		case c == '?':
			inQuery = true
			dst = append(dst, c)
		case c == '*' && rule, c == '$' && rule && i == len(s)-1:
			dst = append(dst, c)
		case c == '*', c == '$', escapes[c]:
			dst = appendEscape(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// requestPath returns the path and query of uri in their compared form,
// without dot segments, and its byteSet. uri is either a request target in
// origin form ("/a/b?c=d", as an HTTP client sends it) or a URL
// ("https://host/a/b?c=d", "host/a/b"); a fragment is ignored, and "" is
// "/". It allocates only when the form differs from what uri holds.
func requestPath(uri string) (string, uint64) {
	if i := strings.IndexByte(uri, '#'); i >= 0 {
		uri = uri[:i]
	}
	if !strings.HasPrefix(uri, "/") {
		uri = pathOfURL(uri)
	}
	if set, ok := scan(uri); ok {
		return uri, set
	}
	b := appendNormal(make([]byte, 0, len(uri)+16), uri, false)
	q := len(b)
	for i, c := range b {
		if c == '?' {
			q = i
			break
		}
	}
	p := string(append(removeDotSegments(b[:q]), b[q:]...))
	return p, byteSet(p)
}

// pathOfURL returns the path and query of a URL that does not start with
// '/': what follows the scheme's "://", if any, and then the authority. A
// URL with no path has the path "/".
func pathOfURL(u string) string {
	if i := schemeLen(u); i > 0 && strings.HasPrefix(u[i:], "://") {
		u = u[i+3:]
	}
	i := strings.IndexAny(u, "/?")
	switch {
	case i < 0:
		return "/"
	case u[i] == '?':
		return "/" + u[i:]
	}
	return u[i:]
}

// schemeLen returns the length of the URI scheme at the start of u
// (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )), or 0 if there is none.
func schemeLen(u string) int {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return i
		}
	}
	return len(u)
}

// scan returns the byteSet of the request target p (starting with '/'), if
// p is already in its compared form: no octet to escape or unescape, no dot
// segment. It is the no-allocation path of requestPath.
func scan(p string) (uint64, bool) {
	var set uint64
	for i := 0; i < len(p); i++ {
		k := class[p[i]]
		if k&normalise != 0 {
			return 0, false
		}
		set |= 1 << (k & 63)
	}
	path := p
	if i := strings.IndexByte(p, '?'); i >= 0 {
		path = p[:i]
	}
	for {
		i := strings.Index(path, "/.")
		if i < 0 {
			return set, true
		}
		path = path[i+2:]
		if path == "" || path[0] == '/' || path[0] == '.' && (len(path) == 1 || path[1] == '/') {
			return 0, false // a "." or ".." segment
		}
	}
}

// byteSet returns the set of the octets of s but '*' (a wildcard in a
// pattern, escaped in a path), as a bit each: the digits, the letters
// (without regard to case) and the marks that a path or pattern in compared
// form may hold each have their own. A set tells which octets a string
// lacks. It is never 0 for a path, which starts with '/'.
func byteSet[S ~string | ~[]byte](s S) uint64 {
	var set uint64
	for i := 0; i < len(s); i++ {
		if s[i] != '*' {
			set |= 1 << (class[s[i]] & 63)
		}
	}
	return set
}

// class gives each octet its bit in a byteSet (its low 6 bits; 63 for an
// octet that no compared form holds) and says whether a URI that holds it
// must be normalised.
var class = func() (t [256]uint8) {
	for c := range t {
		t[c] = normalise | 63
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c - '0')
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = uint8(10 + c - 'a')
		t[c-'a'+'A'] = t[c]
	}
	for i, c := range "!$%&'()+,-./:;=?@[]_~" {
		t[c] = uint8(36 + i)
	}
	for _, c := range "%$*" {
		t[c] |= normalise
	}
	return t
}()

// normalise marks, in class, an octet that a URI in compared form does not
// hold as it is ('*' and '$' are escaped) or that may need changing ('%').
const normalise = 0x80

// removeDotSegments removes the "." and ".." segments of the absolute path
// p as RFC 3986 section 5.2.4 does, in place, and returns the result.
func removeDotSegments(p []byte) []byte {
	out := p[:0] // never longer than what has been read: safe in place
	for i := 0; i < len(p); {
		j := i + 1
		for j < len(p) && p[j] != '/' {
			j++
		}
		seg := p[i+1 : j]
		dot := len(seg) == 1 && seg[0] == '.'
		dots := len(seg) == 2 && seg[0] == '.' && seg[1] == '.'
		switch {
		case dot || dots:
			if dots {
				k := len(out) - 1
				for k >= 0 && out[k] != '/' {
					k--
				}
				out = out[:max(k, 0)]
			}
			if j == len(p) {
				out = append(out, '/')
			}
		default:
			out = append(out, p[i:j]...)
		}
		i = j
	}
	if len(out) == 0 {
		out = append(out, '/')
	}
	return out
}

// isUnreserved reports whether c is one of RFC 3986's unreserved characters.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// isQueryData reports whether c is a reserved character that RFC 3986
// section 3.4 lets stand for data in a query.
func isQueryData(c byte) bool {
	return c == ':' || c == '/' || c == '?' || c == '@'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func appendEscape(dst []byte, c byte) []byte {
	const digits = "0123456789ABCDEF"
	return append(dst, '%', digits[c>>4], digits[c&15])
}
