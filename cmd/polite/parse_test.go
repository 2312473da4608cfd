package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
)

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		rest []string
		json bool
		rate string
	}{
		{"flags first", []string{"-json", "-rate", "2", "u1", "u2"}, []string{"u1", "u2"}, true, "2"},
		{"flags between", []string{"u1", "-json", "u2", "-rate=3"}, []string{"u1", "u2"}, true, "3"},
		{"double dash", []string{"-rate", "4", "--", "-json", "u1"}, []string{"-json", "u1"}, false, "4"},
		{"none", nil, nil, false, "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := newFlagSet("test", "test")
			asJSON := fs.Bool("json", false, "")
			rate := fs.String("rate", "1", "")
			rest, err := parseArgs(fs, c.args)
			require.NoError(t, err)
			assert.Equal(t, c.rest, rest)
			assert.Equal(t, c.json, *asJSON)
			assert.Equal(t, c.rate, *rate)
		})
	}
}

func TestReadLines(t *testing.T) {
	got, err := readLines(strings.NewReader("a\r\n\n  # comment\n\t b \n#\nc"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, got)

	_, err = readLines(strings.NewReader(strings.Repeat("x", maxLine+1)))
	assert.ErrorContains(t, err, "reading stdin")
}

func FuzzParseTarget(f *testing.F) {
	for _, seed := range []string{"http://example.com/", "https://[::1]:80/x", "ftp://x", "http://%zz", "http:///", "http://a b/", "http://münchen.de"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg := parseTarget(raw, polite.DomainKey)
		if tg.err != nil {
			assert.Nil(t, tg.url)
			assert.Contains(t, tg.err.Error(), "bad URL")
			return
		}
		require.NotNil(t, tg.url)
		assert.NotEmpty(t, tg.key)
		assert.Contains(t, []string{"http", "https"}, tg.url.Scheme)
	})
}
