package names

import "testing"

// FuzzNormalizedHostsNeedNoWork checks that a host isNormalized lets
// through unchanged is one that the whole normalisation leaves unchanged.
func FuzzNormalizedHostsNeedNoWork(f *testing.F) {
	for _, host := range []string{
		"www.example.com", "192.0.2.1", "01.2.3.4", "1.2.3", "0x1.2.3.4", "a_b.example.com", "-a.com", "a-.com",
		"xn--mnchen-3ya.de", "localhost", "com", "example..com", ".com", "com.", "Example.com", "::1", "fe80::1%eth0",
	} {
		f.Add(host)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if !isNormalized(host) {
			return
		}
		got, err := normalizeAnyHost(host)
		if err != nil || got != host {
			t.Fatalf("isNormalized(%q), but the normalisation gives %q, %v", host, got, err)
		}
	})
}
