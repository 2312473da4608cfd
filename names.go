package polite

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// nameRequest returns a request to what a domain name given to an option or
// a lookup stands for, and which of "a URL", "a path" or "a port" it has
// where a domain name has none ("" for a bare host). It returns a nil
// request for a name that names no host.
func nameRequest(name string) (*http.Request, string) {
	kind, target := "", name
	switch {
	case strings.Contains(name, "://"):
		kind = "a URL"
	case strings.Contains(name, "/"):
		kind, target = "a path", "http://"+name
	default:
		host, err := normalizeHost(name)
		if err != nil {
			return nil, kind
		}
		target = "http://" + hostForURL(host) + "/"
		if _, port, err := net.SplitHostPort(name); err == nil && port != "" {
			kind, target = "a port", "http://"+name+"/"
		}
	}
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil || req.URL.Host == "" {
		return nil, kind
	}
	return req, kind
}

// keyOf returns the key that name stands for in a lookup: name itself if
// the Transport tracks or configures it, else the key a request to it (a
// host, host:port or URL) is paced under, else name.
func (t *Transport) keyOf(name string) string {
	if _, ok := t.limits[name]; ok {
		return name
	}
	if _, ok := t.domains.Load(name); ok {
		return name
	}
	req, _ := nameRequest(name)
	if req == nil {
		return name
	}
	if key, err := t.keyFunc(req); err == nil && key != "" {
		return key
	}
	return name
}

// checkDomainName refuses a configured domain name that is a URL, has a
// path or a port, unless the key function keys its requests by that very
// name, with an error saying what to write instead. It reports whether
// name is such a name, which is a key as written.
func checkDomainName(name string, keyFunc KeyFunc) (asWritten bool, err error) {
	req, kind := nameRequest(name)
	if kind == "" {
		return false, nil
	}
	if req != nil {
		key, err := keyFunc(req)
		switch {
		case err == nil && key == name:
			return true, nil
		case err == nil && key != "":
			return false, fmt.Errorf("%s, not a domain name: write %q, the key its requests are paced under", kind, key)
		}
	}
	return false, fmt.Errorf("%s, not a domain name: write the domain as the key function names it, such as \"example.com\"", kind)
}
