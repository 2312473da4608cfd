package polite

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/polite-go/polite/internal/names"
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

// Key returns the domain key req is paced under, as the key function
// names it: "(no host)" for a request with no host, which is not paced.
func (t *Transport) Key(req *http.Request) (string, error) {
	if !t.made() {
		return "", errNotMade
	}
	key, err := t.keyFunc(req)
	switch {
	case err != nil:
		return "", fmt.Errorf("polite: key function: %w", err)
	case key != "":
		return key, nil
	case req.URL != nil && req.URL.Host == "":
		return noHostKey, nil
	}
	return "", fmt.Errorf("polite: key function: empty key for %s", req.URL.Redacted())
}

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
	return keyOfHost(req.URL.Host, names.Domain)
}

// HostKey keys a request by its URL's host, normalised as DomainKey
// normalises it, so that each subdomain has its own pace.
func HostKey(req *http.Request) (string, error) {
	if req == nil || req.URL == nil {
		return "", errNoURL
	}
	return keyOfHost(req.URL.Host, names.Host)
}

// keyOfHost returns keyOf(host); the empty key for no host.
func keyOfHost(host string, keyOf func(string) (string, error)) (string, error) {
	if host == "" {
		return "", nil
	}
	return keyOf(host)
}

// keyOf returns the key that name stands for in a lookup: name itself if
// the Transport tracks or configures it, else the key a request to it (a
// host, host:port or URL) is paced under, else name.
func (t *Transport) keyOf(name string) string {
	if _, ok := t.limits.Load().domains.Get(name); ok {
		return name
	}
	if _, ok := t.domains.Load(name); ok {
		return name
	}
	req, _ := names.Request(name)
	if req == nil {
		return name
	}
	if key, err := t.keyFunc(req); err == nil && key != "" {
		return key
	}
	return name
}
