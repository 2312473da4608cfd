package polite

import (
	"bytes"
	"strings"
)

// robotsPath puts a request URI or a robots.txt rule's path in the form
// RFC 9309 (section 2.2.2) compares them in: octets outside ASCII
// percent-encoded, percent-encoded unreserved characters decoded, and the
// hex digits of the other escapes in upper case; a '%' that starts no
// escape is taken for a literal one. So "/über", "/%C3%BCber"
// and "/%c3%bcber" are one path, and so are "/~a" and "/%7Ea"; reserved
// characters ("/", "?", "*", "$", ...) keep their meaning, escaped or not.
func robotsPath(p string) string {
	if !needsCanonical(p) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 16)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				writeEscape(&b, v)
			}
			i += 2
		case c == '%' || c >= 0x80:
			writeEscape(&b, c) // a '%' that starts no escape is a literal one
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// canonicalRules rewrites the paths of a robots.txt's Allow and Disallow
// lines with robotsPath, leaving every other byte as it is.
func canonicalRules(body []byte) []byte {
	if !needsCanonical(string(body)) {
		return body
	}
	out := make([]byte, 0, len(body)+64)
	for line := range bytes.Lines(body) {
		field, value, ok := bytes.Cut(line, []byte(":"))
		name := string(bytes.ToLower(bytes.TrimSpace(field)))
		if !ok || (name != "allow" && name != "disallow") {
			out = append(out, line...)
			continue
		}
		v := value
		if hash := bytes.IndexByte(v, '#'); hash >= 0 {
			v = v[:hash]
		}
		lead := len(v) - len(bytes.TrimLeft(v, " \t"))
		path := bytes.TrimRight(v[lead:], " \t\r\n")
		out = append(out, field...)
		out = append(out, ':')
		out = append(out, value[:lead]...)
		out = append(out, robotsPath(string(path))...)
		out = append(out, value[lead+len(path):]...)
	}
	return out
}

// needsCanonical reports whether s has a byte robotsPath may change.
func needsCanonical(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// isUnreserved reports whether c is one of RFC 3986's unreserved characters.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
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

func writeEscape(b *strings.Builder, c byte) {
	const digits = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(digits[c>>4])
	b.WriteByte(digits[c&15])
}
