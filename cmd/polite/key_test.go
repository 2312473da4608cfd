package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKey(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   []string
		err   string
	}{
		{"domain keys", []string{"https://www.example.co.uk/a", "http://API.Example.COM:8080/", "www.münchen.de", "http://[::1]:80/"},
			"", exitOK, []string{"example.co.uk", "example.com", "xn--mnchen-3ya.de", "::1"}, ""},
		{"host keys", []string{"-host", "https://www.example.co.uk/a", "http://API.Example.COM:8080/"},
			"", exitOK, []string{"www.example.co.uk", "api.example.com"}, ""},
		{"flag after URL", []string{"https://www.example.co.uk/a", "-host"},
			"", exitOK, []string{"www.example.co.uk"}, ""},
		{"stdin", nil, "# urls\nhttps://a.b.example.org/\n\nlocalhost:3000\n", exitOK, []string{"example.org", "localhost"}, ""},
		{"bad URL among good", []string{"http://exa mple.com", "http://example.com"},
			"", exitFailed, []string{"example.com"}, `polite key: bad URL "http://exa mple.com"`},
		{"no host", []string{"http:///path"}, "", exitFailed, nil, "no host"},
		{"no URLs", nil, "", exitUsage, nil, "no URLs"},
		{"bad flag", []string{"-domain", "x"}, "", exitUsage, nil, "flag provided but not defined: -domain"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runPolite(t, c.stdin, append([]string{"key"}, c.args...)...)
			assert.Equal(t, c.code, o.code, "stderr: %s", o.stderr)
			assert.Equal(t, c.out, lines(o.stdout))
			if c.err == "" {
				assert.Empty(t, o.stderr)
				return
			}
			assert.Contains(t, o.stderr, c.err)
			assert.Len(t, lines(o.stderr), 1)
		})
	}
}
