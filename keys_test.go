package polite_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
)

func requestTo(host string) *http.Request {
	return &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "http", Host: host, Path: "/"}, Header: http.Header{}}
}

func TestKeyFuncs(t *testing.T) {
	tests := []struct {
		host      string
		domainKey string
		hostKey   string
	}{
		{"example.com", "example.com", "example.com"},
		{"www.example.com", "example.com", "www.example.com"},
		{"EXAMPLE.com.", "example.com", "example.com"},
		{"example.com:8080", "example.com", "example.com"},
		{"WWW.Example.COM.:443", "example.com", "www.example.com"},
		{"a.b.c.example.com", "example.com", "a.b.c.example.com"},
		{"api.example.co.uk", "example.co.uk", "api.example.co.uk"},
		{"www.münchen.de", "xn--mnchen-3ya.de", "www.xn--mnchen-3ya.de"},
		{"WWW.MÜNCHEN.DE", "xn--mnchen-3ya.de", "www.xn--mnchen-3ya.de"},
		{"xn--mnchen-3ya.de", "xn--mnchen-3ya.de", "xn--mnchen-3ya.de"},
		{"münchen.de:8443", "xn--mnchen-3ya.de", "xn--mnchen-3ya.de"},
		{"192.0.2.1", "192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:8080", "192.0.2.1", "192.0.2.1"},
		{"127.0.0.1.", "127.0.0.1", "127.0.0.1"},
		{"[::1]:8080", "::1", "::1"},
		{"[::1]", "::1", "::1"},
		{"[2001:db8::1]", "2001:db8::1", "2001:db8::1"},
		{"[2001:DB8:0::1]:443", "2001:db8::1", "2001:db8::1"},
		{"[::ffff:192.0.2.1]", "192.0.2.1", "192.0.2.1"},
		{"localhost", "localhost", "localhost"},
		{"LOCALHOST:3000", "localhost", "localhost"},
		{"intranet", "intranet", "intranet"},
		{"co.uk", "co.uk", "co.uk"},
		{"com", "com", "com"},
		{"foo.blogspot.com", "foo.blogspot.com", "foo.blogspot.com"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			key, err := polite.DomainKey(requestTo(tt.host))
			require.NoError(t, err)
			assert.Equal(t, tt.domainKey, key, "DomainKey")
			key, err = polite.HostKey(requestTo(tt.host))
			require.NoError(t, err)
			assert.Equal(t, tt.hostKey, key, "HostKey")
		})
	}
}

func TestKeyFuncsShareIDNKey(t *testing.T) {
	for _, f := range []polite.KeyFunc{polite.DomainKey, polite.HostKey} {
		unicode, err := f(requestTo("www.münchen.de"))
		require.NoError(t, err)
		puny, err := f(requestTo("www.xn--mnchen-3ya.de"))
		require.NoError(t, err)
		assert.Equal(t, puny, unicode)
	}
}

// A URL with no host has the empty key, which the Transport sends
// unpaced; a host that names nothing, or no URL at all, is an error.
func TestKeyFuncsNoHost(t *testing.T) {
	tests := []struct {
		name    string
		req     *http.Request
		wantErr bool
	}{
		{"nil request", nil, true},
		{"nil URL", &http.Request{Host: "example.com"}, true},
		{"empty host", requestTo(""), false},
		{"port only", requestTo(":8080"), true},
		{"dot only", requestTo("."), true},
		{"empty brackets", requestTo("[]:80"), true},
		{"relative URL with Host header", &http.Request{URL: &url.URL{Path: "/x"}, Host: "example.com"}, false},
		{"opaque URL", &http.Request{URL: &url.URL{Scheme: "mailto", Opaque: "a@example.com"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []polite.KeyFunc{polite.DomainKey, polite.HostKey} {
				key, err := f(tt.req)
				assert.Equal(t, tt.wantErr, err != nil, "error: %v", err)
				assert.Empty(t, key)
			}
		})
	}
}

func TestKeyFuncsRejectMalformedHosts(t *testing.T) {
	for _, host := range []string{
		"example..com",
		".example.com",
		"example.com..",
		"a:b:c",
		"[a:b]",
		"[example.com",
		"exam]ple.com",
		"EXAMPLE..COM",
	} {
		t.Run(host, func(t *testing.T) {
			for _, f := range []polite.KeyFunc{polite.DomainKey, polite.HostKey} {
				key, err := f(requestTo(host))
				require.Error(t, err)
				assert.Empty(t, key)
				assert.Regexp(t, `^polite: `, err.Error())
				assert.Contains(t, err.Error(), host)
			}
		})
	}
}

// TestKeyFuncsUseURLNotHost checks that the key comes from req.URL, never
// from req.Host, which only overrides the Host header.
func TestKeyFuncsUseURLNotHost(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "http://www.example.com/page", nil)
	req.Host = "other.org"
	key, err := polite.DomainKey(req)
	require.NoError(t, err)
	assert.Equal(t, "example.com", key)
	key, err = polite.HostKey(req)
	require.NoError(t, err)
	assert.Equal(t, "www.example.com", key)
	assert.Equal(t, "other.org", req.Host, "the request is not modified")
}

// FuzzDomainKey checks that no host makes the key functions panic, that a
// key is its own key, and that DomainKey only adds the eTLD+1 step to HostKey.
func FuzzDomainKey(f *testing.F) {
	for _, host := range []string{
		"www.example.com", "EXAMPLE.com.", "example.com:8080", "api.example.co.uk", "www.münchen.de",
		"xn--mnchen-3ya.de", "192.0.2.1", "[::1]:8080", "[2001:db8::1]", "localhost", "co.uk", "",
		"[fe80::1%eth0]", "example.com..", "ü.de。", "[a:b]", "a:b:c", "[::ffff:1.2.3.4]:1", "１２７.０.０.１",
	} {
		f.Add(host)
	}
	f.Fuzz(func(t *testing.T, host string) {
		hostKey, hostErr := polite.HostKey(requestTo(host))
		key, err := polite.DomainKey(requestTo(host))
		require.Equal(t, hostErr == nil, err == nil, "HostKey and DomainKey disagree on %q: %v, %v", host, hostErr, err)
		if err != nil || host == "" {
			require.Empty(t, key, "an error, or no host, gives the empty key")
			return
		}
		require.NotEmpty(t, key)
		for _, k := range keyForms(key) {
			again, err := polite.DomainKey(requestTo(k))
			require.NoError(t, err, "DomainKey of key %q (host %q)", k, host)
			require.Equal(t, key, again, "DomainKey of key %q (host %q)", k, host)
		}
		for _, k := range keyForms(hostKey) {
			again, err := polite.HostKey(requestTo(k))
			require.NoError(t, err, "HostKey of key %q (host %q)", k, host)
			require.Equal(t, hostKey, again, "HostKey of key %q (host %q)", k, host)
		}
		viaHost, err := polite.DomainKey(requestTo(hostKey))
		require.NoError(t, err)
		require.Equal(t, key, viaHost, "DomainKey of HostKey %q (host %q)", hostKey, host)
	})
}

// keyForms returns the ways a key can appear as a URL host.
func keyForms(key string) []string {
	forms := []string{key}
	if ip := net.ParseIP(key); ip != nil && ip.To4() == nil {
		forms = append(forms, "["+key+"]", "["+key+"]:443")
	} else {
		forms = append(forms, key+":80", key+".")
	}
	return forms
}
