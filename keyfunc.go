package polite

import (
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/polite-go/polite/internal/lru"
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
// its own key. DomainKey remembers the keys of the last few thousand hosts
// it was asked about.
func DomainKey(req *http.Request) (string, error) {
	if req == nil || req.URL == nil {
		return "", errNoURL
	}
	return domainKeys.key(req.URL.Host, domainKeyOf)
}

// HostKey keys a request by its URL's host, normalised as DomainKey
// normalises it, so that each subdomain has its own pace.
func HostKey(req *http.Request) (string, error) {
	if req == nil || req.URL == nil {
		return "", errNoURL
	}
	return hostKeys.key(req.URL.Host, normalizeHost)
}

// The keys DomainKey and HostKey gave of recent hosts.
var (
	domainKeys = newKeyCache()
	hostKeys   = newKeyCache()
)

// keyCache remembers the keys of the 4,096 hosts a key function was last
// asked about, in parts, so that calls for hosts of different parts do not
// wait for each other. It is safe for concurrent use.
type keyCache struct {
	seed  maphash.Seed
	parts [16]keyCachePart
}

type keyCachePart struct {
	mu   sync.Mutex
	keys lru.List[string, string]
}

const cachedHostsPerPart = 4096 / 16

func newKeyCache() *keyCache { return &keyCache{seed: maphash.MakeSeed()} }

// key returns keyOf(host), remembering it; the empty key for no host.
func (c *keyCache) key(host string, keyOf func(string) (string, error)) (string, error) {
	if host == "" {
		return "", nil
	}
	p := &c.parts[maphash.String(c.seed, host)%uint64(len(c.parts))]
	p.mu.Lock()
	if e := p.keys.Get(host); e != nil {
		p.mu.Unlock()
		return e.Value, nil
	}
	p.mu.Unlock()
	key, err := keyOf(host)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys.Peek(host) == nil {
		p.keys.Trim(cachedHostsPerPart-1, 1, func(*lru.Entry[string, string]) bool { return true })
		// Clones: host, and so key, are most often part of a whole URL,
		// which would stay in memory with them. A key that ends host, as
		// a registrable domain does, shares its clone.
		e := p.keys.Add(strings.Clone(host))
		if strings.HasSuffix(host, key) {
			e.Value = e.Key[len(host)-len(key):]
		} else {
			e.Value = strings.Clone(key)
		}
	}
	return key, nil
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
	if host[0] == '.' || host[len(host)-1] == '.' || strings.Contains(host, "..") || strings.ContainsAny(host, ":[]") {
		return "", fmt.Errorf("polite: host %q: not a host name", hostport)
	}
	return strings.ToLower(host), nil
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
