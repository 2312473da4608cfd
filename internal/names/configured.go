package names

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/polite-go/polite/internal/pattern"
)

// Request returns a request to what a domain name given to an option or a
// lookup stands for, and which of "a URL", "a path" or "a port" it has
// where a domain name has none ("" for a bare host). It returns a nil
// request for a name that names no host.
func Request(name string) (*http.Request, string) {
	kind, target := "", name
	switch {
	case strings.Contains(name, "://"):
		kind = "a URL"
	case strings.Contains(name, "/"):
		kind, target = "a path", "http://"+name
	default:
		host, err := Host(name)
		if err != nil {
			return nil, kind
		}
		target = "http://" + ForURL(host) + "/"
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

// Configured returns the key or the pattern that name, a configured domain
// name that pattern.Check accepts, stands for under keyFunc. A pattern
// (*.example.com) stands for the keys under its parent, normalised as
// hosts are; a pattern whose keys keyFunc can never produce, as it keys a
// request to a host under the parent by the parent or by one of its own
// parents (*.example.com under a registrable-domain key), is an error. A
// name that is a host name is normalised as hosts are, if keyFunc keys a
// request to that host by that name; one keyFunc can never produce, as it
// keys a request to that host by a parent domain (www.example.com under a
// registrable-domain key), is an error. A URL, or a name with a path or a
// port, is an error saying what to write instead, unless keyFunc keys its
// requests by that very name. Any other name is a key as keyFunc writes it.
func Configured(name string, keyFunc func(*http.Request) (string, error)) (string, error) {
	if parent, ok := pattern.Parent(name); ok {
		return configPattern(parent, keyFunc)
	}
	return configKey(name, keyFunc)
}

// configPattern returns the pattern of the keys under parent, as
// Configured says.
func configPattern(parent string, keyFunc func(*http.Request) (string, error)) (string, error) {
	host, err := Host(parent)
	if err != nil {
		return "", fmt.Errorf("can never match: %w", err)
	}
	probe, err := http.NewRequest(http.MethodGet, "http://x."+ForURL(host)+"/", nil)
	if err != nil {
		return "", errors.New("can never match: not a host name")
	}
	got, err := keyFunc(probe)
	if err == nil && under(host, got) {
		return "", fmt.Errorf("can never match: the key function names requests to its hosts %q (write %q to limit them all)", got, got)
	}
	return pattern.Of(host), nil
}

// configKey returns the key a configured domain name stands for, as
// Configured says.
func configKey(name string, keyFunc func(*http.Request) (string, error)) (string, error) {
	if asWritten, err := checkDomainName(name, keyFunc); asWritten || err != nil {
		return name, err
	}
	host, err := Host(name)
	if err != nil {
		return name, nil
	}
	probe, err := http.NewRequest(http.MethodGet, "http://"+ForURL(host)+"/", nil)
	if err != nil {
		return "", errors.New("can never match: not a host name")
	}
	got, err := keyFunc(probe)
	switch {
	case err != nil || got == name:
		return name, nil
	case got == host:
		return host, nil
	case under(host, got) || under(probe.URL.Hostname(), got):
		// Keyed by its host, or a parent: a name that is more than a
		// host (a.com?q) is never a key.
		return "", fmt.Errorf("can never match: the key function names its requests %q", got)
	}
	return name, nil
}

// checkDomainName refuses a configured domain name that is a URL, has a
// path or a port, unless the key function keys its requests by that very
// name, with an error saying what to write instead. It reports whether
// name is such a name, which is a key as written.
func checkDomainName(name string, keyFunc func(*http.Request) (string, error)) (asWritten bool, err error) {
	req, kind := Request(name)
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

// under reports whether host is under the domain parent.
func under(host, parent string) bool {
	return strings.HasSuffix(host, "."+parent) || strings.EqualFold(host, parent)
}
