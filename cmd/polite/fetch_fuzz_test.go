package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http/httpguts"

	"github.com/polite-go/polite/config"
)

// fuzzConfigs are the config files FuzzFetchInput lets the command read;
// any other path does not exist, so that the fuzzer cannot make it read
// the machine's files (or a terminal, and wait).
var fuzzConfigs = map[string]bool{
	"/dev/zero":                            true,
	"/dev/null":                            true,
	"../../config/testdata/all_rules.json": true,
	"../../config/testdata/seed001.json":   true,
}

func fuzzLoad(path string) (*config.File, error) {
	if fuzzConfigs[path] {
		return config.Load(path)
	}
	return nil, fmt.Errorf("config: open %s: %w", path, fs.ErrNotExist)
}

// FuzzFetchInput runs the whole of polite fetch's input handling on an
// argument vector (argv split at NUL bytes) and a stdin, then makes the
// Transport as the command would, without Redis: everything the command
// does before its first request. No input may make it panic, end with an
// exit code other than 0 (help) or 2 (bad usage, one line on stderr), or
// allocate much more than it was given.
func FuzzFetchInput(f *testing.F) {
	for _, seed := range []struct{ argv, stdin string }{
		// The cases.
		{"-config\x00/dev/zero\x00http://a.test/", ""},
		{"-redis\x00redis://h/0?pool_size=-5\x00http://a.test/", ""},
		{"-redis\x00redis://h/0?pool_size=99999999999\x00http://a.test/", ""},
		{"", "\ufeffhttp://a.test/\nhttp://b.test/x?y=1\n"},
		{"-robots\x00bot\r\nX-Evil: 1\x00http://a.test/", ""},
		// Every flag, good and bad values.
		{"-json\x00-rate\x002.5\x00-burst\x003\x00-concurrency\x008\x00-timeout\x001s\x00-v\x00http://a.test/", ""},
		{"-config\x00../../config/testdata/all_rules.json\x00-robots\x00mybot\x00-rate=3\x00http://example.com/", ""},
		{"-config\x00../../config/testdata/seed001.json\x00-out\x00/nonexistent/dir\x00-metrics\x00127.0.0.1:0", "https://javdb.com/\n"},
		{"-config\x00/dev/null\x00http://a.test/", ""},
		{"-config\x00/etc/passwd\x00http://a.test/", ""},
		{"-redis\x00redis://:pw@127.0.0.1:6379/2?dial_timeout=1s&pool_size=4&client_name=x\x00http://a.test/", ""},
		{"-redis\x00unix:///run/redis.sock?db=1\x00http://a.test/", ""},
		{"-redis\x00rediss://h/0?skip_verify=true&protocol=2", "http://a.test/"},
		{"-robots\x00\x00http://a.test/", ""},
		{"-robots\x00mybot\x00-contact\x00https://example.com/bot\x00http://a.test/", ""},
		{"-user-agent\x00ExampleBot/2.1 (+https://example.com/bot)\x00http://a.test/", ""},
		{"-contact\x00https://example.com/a\r\nX-Evil: 1\x00http://a.test/", ""},
		{"-rate\x00NaN\x00http://a.test/", ""},
		{"-burst\x00-1\x00http://a.test/", ""},
		{"-timeout\x00-1s\x00http://a.test/", ""},
		{"-concurrency\x0099999999999999999999\x00http://a.test/", ""},
		{"-h", ""},
		{"-nope\nx", ""},
		{"--\x00-json", ""},
		{"", ""},
		{"", "# only a comment\n\n"},
		{"", "\xff\xfeh\x00t\x00t\x00p\x00"},
		// URLs the key function and the parser must survive.
		{"http://[fe80::1%25eth0]:8080/\x00http://münchen.de/\x00http://%zz/\x00http://a b/\x00ftp://x/\x00http:///x", ""},
		{"", "http://xn--/\nhttp://[::1]:80/\nhttp://a.test:99999/\nhttp://.\n\x00\nhttp://a.test/\x7f\n"},
	} {
		f.Add(seed.argv, []byte(seed.stdin))
	}
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	f.Fuzz(func(t *testing.T, argv string, stdin []byte) {
		var args []string
		if argv != "" {
			args = strings.Split(argv, "\x00")
		}
		var stdout, stderr bytes.Buffer
		e := env{stdin: bytes.NewReader(stdin), stdout: &stdout, stderr: &stderr}
		before := allocated()
		p, code := planFetch(args, e, fuzzLoad)
		if p == nil {
			switch code {
			case exitOK:
				assert.Contains(t, stdout.String(), "Usage: polite fetch")
				assert.Empty(t, stderr.String())
			case exitUsage:
				assert.Regexp(t, `^polite fetch: [^\n]+\n$`, stderr.String())
				assert.Empty(t, stdout.String())
			default:
				t.Fatalf("exit code %d; stderr: %s", code, stderr.String())
			}
		} else {
			require.Equal(t, exitOK, code)
			assert.Empty(t, stdout.String()+stderr.String())
			n := 0
			for tg, ok := p.targets.next(); ok; tg, ok = p.targets.next() {
				n++
				if tg.err != nil {
					assert.Regexp(t, `bad URL|more than one URL|longer than|reading stdin`, tg.err.Error())
					assert.LessOrEqual(t, len(failure(tg)), 4*maxQuoted+200, "an error quotes at most about maxQuoted bytes of a URL")
					continue
				}
				require.NotNil(t, tg.url)
				assert.Contains(t, []string{"http", "https"}, tg.url.Scheme)
				assert.NotEmpty(t, tg.key)
			}
			require.NotZero(t, n)
			assert.True(t, httpguts.ValidHeaderFieldValue(p.userAgent()), "User-Agent %q", p.userAgent())
			tr, err := p.transport(slog.New(slog.DiscardHandler))
			if err != nil {
				stderr.Reset()
				assert.Equal(t, exitUsage, fatal(e, "polite fetch", err))
				assert.Regexp(t, `^polite fetch: [^\n]+\n$`, stderr.String())
			} else {
				tr.CloseIdleConnections()
			}
		}
		// Reading /dev/zero up to the 1 MiB limit takes a few MiB; the
		// rest is a small multiple of the input.
		limit := uint64(16<<20 + 256*(len(argv)+len(stdin)))
		assert.LessOrEqual(t, allocated()-before, limit, "allocated")
	})
}
