// Package names says what a domain name given to the Transport stands for:
// the host a URL's host is keyed on, and the key or pattern a configured
// name stands for under a key function.
package names

import (
	"fmt"
	"net"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Domain returns the registrable domain (eTLD+1) of hostport, a URL's
// host[:port], normalised as Host normalises it; an IP address, or a host
// with no registrable domain (localhost, a bare public suffix), is its own
// domain.
func Domain(hostport string) (string, error) {
	if name, ok := plainHostName(hostport); ok {
		return registrable(name), nil
	}
	host, err := hostOf(hostport)
	if err != nil {
		return "", err
	}
	if parseIP(host) != nil {
		return host, nil
	}
	return registrable(host), nil
}

// Host turns a URL's host[:port] into the host polite keys on: lower-cased,
// its port and trailing dot dropped, an internationalised name in
// punycode, an IP address in its canonical form (IPv6 without brackets or
// zone). It is idempotent: the host it returns normalises to itself.
func Host(hostport string) (string, error) {
	if name, ok := plainHostName(hostport); ok {
		return name, nil
	}
	return hostOf(hostport)
}

// hostOf is Host for any hostport: the path for what plainHostName leaves.
func hostOf(hostport string) (string, error) {
	host, split := hostport, false
	if strings.Contains(hostport, ":") { // a port, or an IPv6 literal
		if h, _, err := net.SplitHostPort(hostport); err == nil {
			host, split = h, true
		}
	}
	if !split && strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if !isASCII(host) {
		// Before the trailing dot goes: the mapping may make one ("。").
		ascii, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", fmt.Errorf("polite: host %q: %w", hostport, err)
		}
		host = ascii
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return "", fmt.Errorf("polite: host %q: no host name", hostport)
	}
	if ip := parseIP(host); ip != nil {
		return ip.String(), nil
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		if ip := parseIP(host[:i]); ip != nil {
			return ip.String(), nil // the zone names an interface, not a site
		}
	}
	name, ok := hostName(host)
	if !ok {
		return "", fmt.Errorf("polite: host %q: not a host name", hostport)
	}
	return name, nil
}

// plainHostName returns hostport as Host returns it, and true, if it is
// what almost every URL has: a host name of ASCII letters, digits, '-' and
// '_', with no empty label and at least one byte that is no digit or dot
// (so it is no IPv4 address), no port, maybe a trailing dot. It decides in
// one pass over the bytes, as every request is keyed; for any other
// hostport it returns false, and hostOf, which handles every form, says
// what it stands for.
func plainHostName(hostport string) (string, bool) {
	name := strings.TrimSuffix(hostport, ".")
	upper, numeric := false, true
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z' || c == '-' || c == '_':
			numeric = false
		case 'A' <= c && c <= 'Z':
			upper, numeric = true, false
		case '0' <= c && c <= '9':
		case c == '.':
			if i == 0 || name[i-1] == '.' {
				return "", false
			}
		default:
			return "", false
		}
	}
	if numeric || name[len(name)-1] == '.' { // numeric if name is empty
		return "", false
	}
	if upper {
		return strings.ToLower(name), true
	}
	return name, true
}

// registrable returns the registrable domain (eTLD+1) of name, a host
// name in lower case with no empty label, or name itself if it has none:
// publicsuffix.EffectiveTLDPlusOne without its checks for empty labels,
// which name has passed, and without the error it makes for a name that
// is a public suffix or less, such as localhost.
func registrable(name string) string {
	suffix, _ := publicsuffix.PublicSuffix(name)
	i := len(name) - len(suffix) - 1
	if i < 0 || name[i] != '.' {
		return name
	}
	return name[1+strings.LastIndexByte(name[:i], '.'):]
}

// ForURL returns host as a URL writes it: an IPv6 address in brackets.
func ForURL(host string) string {
	for i := 0; i < len(host); i++ {
		if host[i] == ':' {
			return "[" + host + "]"
		}
	}
	return host
}

// Loopback reports whether key names a loopback host.
func Loopback(key string) bool {
	if key == "localhost" || strings.HasSuffix(key, ".localhost") {
		return true
	}
	ip := parseIP(key)
	return ip != nil && ip.IsLoopback()
}

// hostName returns host, an ASCII string that is not empty, in lower case,
// and whether it is a host name: no empty label, no colon or bracket.
func hostName(host string) (string, bool) {
	if host[0] == '.' || host[len(host)-1] == '.' {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case c == ':' || c == '[' || c == ']':
			return "", false
		case c == '.' && host[i-1] == '.': // i > 0: host[0] is no dot
			return "", false
		}
	}
	return strings.ToLower(host), true
}

// parseIP is net.ParseIP, which it calls only for a string made of the
// characters of IP addresses, as a failed parse allocates.
// Measured: for a host name, names.Domain makes 2 allocations and ~200 ns fewer.
func parseIP(s string) net.IP {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ':' && c != '.' && (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return nil
		}
	}
	return net.ParseIP(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
