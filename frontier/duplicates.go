package frontier

import (
	"errors"
	"hash/fnv"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrDuplicate is what Push returns for a request dropped because its URL
// was pushed before (see KeepDuplicates).
var ErrDuplicate = errors.New("frontier: dropped: its URL was pushed before")

// seenKey returns the key under which the Frontier remembers req's URL,
// and false for a request it never drops: one whose method is not GET or
// HEAD. The key is a 64-bit FNV-1a hash of the method and the normalised
// URL: two URLs in a million share one with a chance of about 3e-8.
func seenKey(req *http.Request) (uint64, bool) {
	if req.Method != "" && req.Method != http.MethodGet && req.Method != http.MethodHead {
		return 0, false
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	h := fnv.New64a()
	h.Write([]byte(method))
	h.Write([]byte{' '})
	h.Write([]byte(normalURL(req.URL)))
	return h.Sum64(), true
}

// normalURL returns u as the Frontier compares URLs: the scheme and host
// in lower case, without the scheme's default port or the fragment, an
// empty path as "/". The query is kept as it is: its order may matter to
// the server.
func normalURL(u *url.URL) string {
	n := *u
	n.Scheme = strings.ToLower(n.Scheme)
	n.Host = strings.ToLower(n.Host)
	if host, port, err := net.SplitHostPort(n.Host); err == nil &&
		(n.Scheme == "http" && port == "80" || n.Scheme == "https" && port == "443") {
		n.Host = host
		if strings.Contains(host, ":") {
			n.Host = "[" + host + "]"
		}
	}
	if n.Path == "" && n.Opaque == "" {
		n.Path = "/"
	}
	n.Fragment, n.RawFragment = "", ""
	return n.String()
}
