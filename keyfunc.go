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
	if req.URL.Host == "" {
		return "", nil
	}
	return domainKeyOf(req.URL.Host)
}

// HostKey keys a request by its URL's host, normalised as DomainKey
// normalises it, so that each subdomain has its own pace.
func HostKey(req *http.Request) (string, error) {
	if req == nil || req.URL == nil {
		return "", errNoURL
	}
	if req.URL.Host == "" {
		return "", nil
	}
	return normalizeHost(req.URL.Host)
}

func domainKeyOf(hostport string) (string, error) {
	host, err := normalizeHost(hostport)
	if err != nil {
		return "", err
	}
	if net.ParseIP(host) != nil {
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
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
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
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), nil
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		if ip := net.ParseIP(host[:i]); ip != nil {
			return ip.String(), nil // the zone names an interface, not a site
		}
	}
	if host[0] == '.' || host[len(host)-1] == '.' || strings.Contains(host, "..") || strings.ContainsAny(host, ":[]") {
		return "", fmt.Errorf("polite: host %q: not a host name", hostport)
	}
	return strings.ToLower(host), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
