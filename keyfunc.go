package polite

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// KeyFunc names the domain a request is paced under. Requests with the same
// key share one limit. It must not modify the request, and it is called for
// every request, so it should be fast; it must be safe for concurrent use.
//
// The empty key, with no error, says that the request has no host to pace
// (its URL has none, as file:///x or a scheme registered on the base
// transport has none): the Transport sends it to its base unpaced, as
// net/http would, counted in the stats of the key "(no host)". An error
// makes the Transport refuse the request, wrapping the error: return one
// for requests with no host to refuse them instead.
//
// The server and global scopes (WithServerLimit, WithGlobalLimit) share the
// limiter with the domains under keys a host name never is: "ip:" and an
// address, and "(global)". A KeyFunc must not return such keys.
type KeyFunc func(*http.Request) (string, error)

// noHostKey is the key under which requests with no host are counted.
const noHostKey = "(no host)"

var errNoURL = errors.New("polite: request has no URL")

// DomainKey, the default KeyFunc, keys a request by the registrable domain
// (eTLD+1) of its URL's host, so that www.example.com and api.example.com
// share one pace. The host is lower-cased, its port and trailing dot
// dropped, and an internationalised name turned into punycode. An IP
// address is its own key (IPv6 without brackets); so is a host with no
// registrable domain, such as localhost or a bare public suffix; an IPv6
// address with a zone (fe80::1%eth0) is keyed without its zone. A URL with
// no host gives the empty key; a host that is no host name (an empty
// label, a colon outside an IP literal) gives an error naming it. A key is
// its own key.
func DomainKey(req *http.Request) (string, error) {
	if req == nil || req.URL == nil {
		return "", errNoURL
	}
	return keyOfHost(req.URL.Host, domainKeyOf)
}

// HostKey keys a request by its URL's host, normalised as DomainKey
// normalises it, so that each subdomain has its own pace.
func HostKey(req *http.Request) (string, error) {
	if req == nil || req.URL == nil {
		return "", errNoURL
	}
	return keyOfHost(req.URL.Host, normalizeHost)
}

// keyOfHost returns keyOf(host); the empty key for no host.
func keyOfHost(host string, keyOf func(string) (string, error)) (string, error) {
	if host == "" {
		return "", nil
	}
	return keyOf(host)
}

func domainKeyOf(hostport string) (string, error) {
	host, err := normalizeHost(hostport)
	if err != nil {
		return "", err
	}
	if parseIP(host) != nil {
		return host, nil
	}
	if etld1, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return etld1, nil
	}
	return host, nil
}

// normalizeHost turns a URL's host[:port] into the host polite keys on. It
// is idempotent: the host it returns normalises to itself.
func normalizeHost(hostport string) (string, error) {
	if isNormalized(hostport) {
		return hostport, nil
	}
	return normalizeAnyHost(hostport)
}

// isNormalized reports whether host is a host name as normalizeHost
// returns it, which most are: lower-case letters, digits, hyphens,
// underscores and dots, with no empty label and no trailing dot.
func isNormalized(host string) bool {
	if host == "" || host[0] == '.' || host[len(host)-1] == '.' {
		return false
	}
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		case c == '.' && host[i-1] != '.': // i > 0: host[0] is no dot
		default:
			return false
		}
	}
	return true
}

// normalizeAnyHost is normalizeHost for any host.
func normalizeAnyHost(hostport string) (string, error) {
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

// hostName returns host, an ASCII string that is not empty, in lower case,
// and whether it is a host name: no empty label, no colon or bracket.
func hostName(host string) (string, bool) {
	if host[0] == '.' || host[len(host)-1] == '.' {
		return "", false
	}
	upper := false
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case c == ':' || c == '[' || c == ']':
			return "", false
		case c == '.' && host[i-1] == '.': // i > 0: host[0] is no dot
			return "", false
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	if upper {
		host = strings.ToLower(host)
	}
	return host, true
}

// parseIP is net.ParseIP, which it calls only for a string made of the
// characters of IP addresses, as a failed parse allocates.
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
