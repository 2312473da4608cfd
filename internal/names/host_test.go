package names

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/publicsuffix"
)

// hostForms holds hosts of every form: plain host names, which
// plainHostName takes, and the forms only hostOf handles.
var hostForms = []struct {
	host  string
	plain bool // plainHostName takes it
}{
	{"www.site0.com", true},
	{"example.com", true},
	{"A.B.", true},
	{"WWW.Example.COM.", true},
	{"my-site_1.example.co.uk", true},
	{"xn--mnchen-3ya.de", true},
	{"XN--MNCHEN-3YA.DE", true},
	{"localhost", true},
	{"LOCALHOST.", true},
	{"com", true},
	{"co.uk", true},
	{"foo.blogspot.com", true},
	{"www.ck", true},           // an exception rule: !www.ck
	{"a.b.c.ck", true},         // a wildcard rule: *.ck
	{"city.kawasaki.jp", true}, // an exception under a wildcard
	{"1.2.3.4a", true},
	{"-.-", true},
	{"1-2.3", true},
	{"a..b", false},
	{".a.b", false},
	{"a.b..", false},
	{".", false},
	{"..", false},
	{"", false},
	{"1.2.3.4", false},
	{"1.2.3.4.", false},
	{"01.2.3.4", false},
	{"1.2.3", false},
	{"123", false},
	{"::1", false},
	{"[::1]", false},
	{"[::1]:80", false},
	{"[fe80::1%eth0]:80", false},
	{"fe80::1%25eth0", false},
	{"1.2.3.4%x", false},
	{"ex%41mple", false},
	{"a.b:8080", false},
	{"a.b:", false},
	{":80", false},
	{"a:b:c", false},
	{"[a.b]", false},
	{"[example.com", false},
	{"exam]ple.com", false},
	{"ÉCOLE.fr", false},
	{"www.münchen.de", false},
	{"ü.de。", false},
	{"１２７.０.０.１", false},
	{"a b.com", false},
	{"a/b.com", false},
	{"a\x00.com", false},
	{"a.com\x7f", false},
}

// TestPlainHostName checks which hosts take the one-pass path, and that
// for every host Host and Domain say what hostOf and the public suffix
// list say.
func TestPlainHostName(t *testing.T) {
	for _, tt := range hostForms {
		t.Run(tt.host, func(t *testing.T) {
			_, plain := plainHostName(tt.host)
			assert.Equal(t, tt.plain, plain, "plainHostName takes it")
			assertAsSlowPath(t, tt.host)
		})
	}
}

// FuzzPlainHostName checks that for any host Host and Domain say what
// hostOf and the public suffix list say.
func FuzzPlainHostName(f *testing.F) {
	for _, tt := range hostForms {
		f.Add(tt.host)
	}
	f.Fuzz(assertAsSlowPath)
}

// assertAsSlowPath checks that Host(host) is hostOf(host), and Domain(host)
// is the eTLD+1 that publicsuffix.EffectiveTLDPlusOne gives for it.
func assertAsSlowPath(t *testing.T, host string) {
	want, wantErr := hostOf(host)
	got, err := Host(host)
	require.Equal(t, wantErr, err, "Host(%q)", host)
	require.Equal(t, want, got, "Host(%q)", host)

	if wantErr == nil && parseIP(want) == nil {
		if etld1, err := publicsuffix.EffectiveTLDPlusOne(want); err == nil {
			want = etld1
		}
	}
	got, err = Domain(host)
	require.Equal(t, wantErr, err, "Domain(%q)", host)
	require.Equal(t, want, got, "Domain(%q)", host)
	if name, ok := plainHostName(host); ok {
		require.Equal(t, strings.ToLower(strings.TrimSuffix(host, ".")), name, "plainHostName(%q)", host)
	}
}

// BenchmarkDomain measures the key of a plain host name and of forms only
// hostOf handles.
func BenchmarkDomain(b *testing.B) {
	for _, host := range []string{"www.site0.com", "WWW.Site0.com.", "localhost", "example.com:8080", "192.0.2.1", "[::1]:80", "www.münchen.de"} {
		b.Run(host, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Domain(host); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
