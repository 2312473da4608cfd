package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"
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

// readList reads in as lineReader does: the usable lines' text, and
// the unusable ones' "line N: why".
func readList(t *testing.T, in io.Reader) (texts, failures []string) {
	t.Helper()
	lr, err := newLineReader(in)
	require.NoError(t, err)
	for l, ok := lr.next(); ok; l, ok = lr.next() {
		if l.err != nil {
			failures = append(failures, failure(target{line: l.n, err: l.err}))
			continue
		}
		texts = append(texts, l.text)
	}
	return texts, failures
}

func TestReadLines(t *testing.T) {
	got, failures := readList(t, strings.NewReader("a\r\n\n  # comment\n\t b \n#\nc"))
	assert.Equal(t, []string{"a", "b", "c"}, got)
	assert.Empty(t, failures)

	got, failures = readList(t, strings.NewReader("a\n"+strings.Repeat("x", maxLine+1)+"\nb c\nd"))
	assert.Equal(t, []string{"a", "d"}, got, "an unusable line fails alone")
	assert.Equal(t, []string{"line 2: longer than 64 KiB", `line 3: more than one URL ("b", then "c"): give one URL per line`}, failures)
}

// TestReadLinesQuotesLittle is issue 39's 30 KB line holding a space:
// its error quotes about maxQuoted bytes of it, not 90 KB.
func TestReadLinesQuotesLittle(t *testing.T) {
	long := "http://a.test/" + strings.Repeat("x", 15<<10)
	_, failures := readList(t, strings.NewReader(long+" "+long+"\n"))
	require.Len(t, failures, 1)
	assert.Less(t, len(failures[0]), 3*maxQuoted, "%.300s", failures[0])
	assert.Contains(t, failures[0], fmt.Sprintf("(%d bytes)", len(long)))

	tg := parseTarget("http://a.test/"+strings.Repeat("x", 30<<10)+"%zz", polite.DomainKey)
	require.Error(t, tg.err)
	assert.Less(t, len(tg.err.Error()), 3*maxQuoted, "%.300s", tg.err.Error())
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

func TestReadLinesEncoding(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"UTF-8 byte-order mark", "\ufeffhttp://a.test/\nhttp://b.test/", []string{"http://a.test/", "http://b.test/"}},
		{"mark before a comment", "\ufeff# list\nhttp://a.test/", []string{"http://a.test/"}},
		{"mark before spaces", "\ufeff  http://a.test/  \r\n", []string{"http://a.test/"}},
		{"mark alone", "\ufeff", nil},
		{"mark on a later line is kept", "http://a.test/\n\ufeffhttp://b.test/", []string{"http://a.test/", "\ufeffhttp://b.test/"}},
		{"two marks: the second is kept", "\ufeff\ufeffhttp://a.test/", []string{"\ufeffhttp://a.test/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, failures := readList(t, strings.NewReader(c.in))
			assert.Empty(t, failures)
			assert.Equal(t, c.want, got)
		})
	}
	for _, in := range []string{"\xff\xfeh\x00t\x00t\x00p\x00", "\xfe\xff\x00h\x00t\x00t\x00p"} {
		_, err := newLineReader(strings.NewReader(in))
		assert.ErrorContains(t, err, "UTF-16")
	}
}

// TestReadLinesBounds checks the bound of a line at its edge, and that a
// list is read as it comes, however long.
func TestReadLinesBounds(t *testing.T) {
	long := strings.Repeat("x", maxLine)
	for _, c := range []struct {
		name     string
		in       io.Reader
		texts    int
		failures []string
	}{
		{"longest line", strings.NewReader(long), 1, nil},
		{"longest line, CRLF", strings.NewReader(long + "\r\n" + long + "\r\n"), 2, nil},
		{"line too long", strings.NewReader("a\n\n" + long + "x\nb"), 2, []string{"line 3: longer than 64 KiB"}},
		{"line too long at the end", strings.NewReader("a\n" + long + "xy"), 1, []string{"line 2: longer than 64 KiB"}},
		{"a million URLs and more", strings.NewReader(strings.Repeat("u\n\n#\n", 1_000_001)), 1_000_001, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			texts, failures := readList(t, c.in)
			assert.Len(t, texts, c.texts)
			assert.Equal(t, c.failures, failures)
		})
	}
}

func TestCheckAgent(t *testing.T) {
	for _, agent := range []string{"mybot", "Googlebot", "my-bot_2", "mybot/1.0", strings.Repeat("a", maxAgent)} {
		assert.NoError(t, checkAgent(agent), agent)
	}
	for _, c := range []struct{ agent, want string }{
		{"", "empty agent"},
		{"my bot", "a space at byte 2"},
		{" mybot", "a space at byte 0"},
		{"mybot\t", "a space at byte 5"},
		{"bot\r\nX-Evil: 1", "a line break at byte 3"},
		{"bot\n", "a line break at byte 3"},
		{"bot\x00", "a control character at byte 3"},
		{"bot\x7f", "a control character at byte 3"},
		{"bötli", "a byte outside printable ASCII at byte 1"},
		{"\xff", "a byte outside printable ASCII at byte 0"},
		{strings.Repeat("a", maxAgent+1), "longer than 128 bytes"},
	} {
		t.Run(fmt.Sprintf("%q", c.agent), func(t *testing.T) {
			assert.ErrorContains(t, checkAgent(c.agent), c.want)
		})
	}
}

func TestParseRedisURL(t *testing.T) {
	for _, c := range []struct {
		url  string
		addr string
		db   int
	}{
		{"redis://localhost:6379/0", "localhost:6379", 0},
		{"redis://h", "h:6379", 0},
		{"redis://h/", "h:6379", 0},
		{"redis://:secret@h:7000/3", "h:7000", 3},
		{"redis://h/3?db=4", "h:6379", 4},
		{"rediss://h/1?skip_verify=true", "h:6379", 1},
		{"unix:///run/redis.sock?db=2", "/run/redis.sock", 2},
		{"redis://[::1]:6379/0", "[::1]:6379", 0},
	} {
		t.Run(c.url, func(t *testing.T) {
			opt, err := parseRedisURL(c.url)
			require.NoError(t, err)
			assert.Equal(t, c.addr, opt.Addr)
			assert.Equal(t, c.db, opt.DB)
		})
	}
	every := "redis://h/0?protocol=2&client_name=polite-1&max_retries=-1&min_retry_backoff=0&max_retry_backoff=2s" +
		"&dial_timeout=3&read_timeout=-1&write_timeout=500ms&pool_fifo=true&pool_size=10000&pool_timeout=1h" +
		"&min_idle_conns=0&max_idle_conns=5&max_active_conns=10&max_concurrent_dials=2&conn_max_idle_time=24h" +
		"&max_conn_age=86400&conn_max_lifetime_jitter=1s&db="
	opt, err := parseRedisURL(every)
	require.NoError(t, err, "every option at a value in range")
	assert.Equal(t, 10000, opt.PoolSize)
	assert.Equal(t, 3*time.Second, opt.DialTimeout)

	for _, c := range []struct{ url, want string }{
		{"http://localhost:6379", `scheme "http"`},
		{"redis:h", "no // after redis:"},
		{"redis://h:0/0", "port 0: must be between 1 and 65535"},
		{"redis://h:99999/0", "port 99999"},
		{"redis://h:x/0", "not a URL"},
		{"redis://h/a", `database "a"`},
		{"redis://h/-1", `database "-1"`},
		{"redis://h/99999999999", `database "99999999999"`},
		{"redis://h/0/1", `path "/0/1"`},
		{"unix://", "no socket path"},
		{"redis://h/0?pool_size=-5", `option pool_size: "-5": must be a whole number from 1 to 10000`},
		{"redis://h/0?pool_size=99999999999", "option pool_size: "},
		{"redis://h/0?pool_size=0", "option pool_size: "},
		{"redis://h/0?pool_size=1e3", "option pool_size: "},
		{"redis://h/0?min_idle_conns=99999999999", "option min_idle_conns: "},
		{"redis://h/0?max_idle_conns=-1", "option max_idle_conns: "},
		{"redis://h/0?max_active_conns=99999999999", "option max_active_conns: "},
		{"redis://h/0?max_concurrent_dials=10001", "option max_concurrent_dials: "},
		{"redis://h/0?max_retries=-5", "option max_retries: "},
		{"redis://h/0?max_retries=101", "option max_retries: "},
		{"redis://h/0?protocol=4", "option protocol: "},
		{"redis://h/0?db=-1", "option db: "},
		{"redis://h/0?dial_timeout=0", `option dial_timeout: "0": must be positive`},
		{"redis://h/0?pool_timeout=-1s", "option pool_timeout: "},
		{"redis://h/0?read_timeout=25h", `option read_timeout: "25h": must be at most 24h0m0s`},
		{"redis://h/0?read_timeout=99999999999", "option read_timeout: "},
		{"redis://h/0?read_timeout=99999999999999999999", "option read_timeout: "},
		{"redis://h/0?write_timeout=soon", "option write_timeout: "},
		{"redis://h/0?conn_max_lifetime=1h&max_conn_age=1h", "option conn_max_lifetime: given with max_conn_age"},
		{"redis://h/0?idle_timeout=1h&conn_max_idle_time=1h", "option conn_max_idle_time: given with idle_timeout"},
		{"redis://h/0?pool_fifo=yes", "option pool_fifo: "},
		{"redis://h/0?skip_verify=true", "option skip_verify: only with rediss://"},
		{"redis://h/0?client_name=my%20app", "option client_name: "},
		{"redis://h/0?client_name=a%0D%0Ab", "option client_name: "},
		{"redis://h/0?speed=3", "option speed: unknown (known options: client_name, "},
		{"redis://h/0?addr=other:1", "option addr: unknown"},
		{"redis://h/0?Pool_Size=3", "option Pool_Size: unknown"},
		{"redis://h/0?pool_size=1&pool_size=2", "option pool_size: given more than once"},
		{"redis://h/0?pool_size=1&pool_size=", "option pool_size: given more than once"},
		{"redis://h/0?pool_size=1;x=2", "options: invalid semicolon"},
		{"redis://h/0?a=%zz", "options: invalid URL escape"},
	} {
		t.Run(c.url, func(t *testing.T) {
			opt, err := parseRedisURL(c.url)
			assert.Nil(t, opt)
			assert.ErrorContains(t, err, c.want)
		})
	}
}

func TestParseRedisURLHidesPassword(t *testing.T) {
	for _, raw := range []string{"redis://user:s3cret@h:x/0", "redis:user:s3cret@h"} {
		_, err := parseRedisURL(raw)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "s3cret")
	}
}

func FuzzReadLines(f *testing.F) {
	for _, seed := range []string{"", "a\r\n\n  # c\n\t b \n#\nc", "\ufeffhttp://a.test/", "\ufeff", "\xff\xfeh\x00", "\xef\xbb", "a\rb\rc", "\x00\n\x85\n\u2028"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lr, err := newLineReader(bytes.NewReader(in))
		if err != nil {
			assert.Regexp(t, `^reading stdin: `, err.Error())
			return
		}
		first := true
		for l, ok := lr.next(); ok; l, ok = lr.next() {
			if l.err != nil {
				assert.Positive(t, l.n)
				assert.LessOrEqual(t, len(l.err.Error()), 2*maxQuoted+100)
				continue
			}
			assert.NotEmpty(t, l.text)
			assert.Equal(t, strings.TrimSpace(l.text), l.text)
			assert.False(t, strings.HasPrefix(l.text, "#"))
			assert.NotContains(t, l.text, "\n")
			assert.LessOrEqual(t, len(l.text), maxLine)
			if first && bytes.HasPrefix(in, []byte("\ufeff")) && !bytes.HasPrefix(in, []byte("\ufeff\ufeff")) {
				assert.False(t, strings.HasPrefix(l.text, "\ufeff"), "the mark is skipped")
			}
			first = false
		}
	})
}

// FuzzParseRedisURL checks that whatever -redis URL parseRedisURL
// accepts, go-redis can make a client of without panicking. The client's
// dialer is replaced, so that nothing is sent anywhere.
func FuzzParseRedisURL(f *testing.F) {
	for _, seed := range []string{
		"redis://localhost:6379/0", "redis://h/0?pool_size=-5", "redis://h/0?pool_size=99999999999",
		"redis://h/0?min_idle_conns=3&pool_size=2", "redis://h/0?max_retries=-1&dial_timeout=0",
		"rediss://u:p@h:1/2?skip_verify=1&protocol=3", "unix:///s?db=3", "redis://h/0?read_timeout=9223372036",
		"redis://h/0?conn_max_lifetime=1h&conn_max_lifetime_jitter=2h", "redis://[::1%25lo]:6379/1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		opt, err := parseRedisURL(raw)
		if err != nil {
			assert.Nil(t, opt)
			return
		}
		require.NotNil(t, opt)
		assert.GreaterOrEqual(t, opt.PoolSize, 0)
		assert.LessOrEqual(t, opt.PoolSize, maxRedisConns)
		assert.GreaterOrEqual(t, opt.MaxRetries, -1)
		opt.Dialer = func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("no dialing in a fuzz test")
		}
		client := redis.NewClient(opt)
		assert.NoError(t, client.Close())
	})
}

// FuzzRedactHidesPassword checks that a URL's password, among other words
// or not, parsed or not, never shows in what polite fetch prints of it.
func FuzzRedactHidesPassword(f *testing.F) {
	f.Add("", "alice", "1", "a.test/x")
	f.Add("http://b.test/ ", "bob", "2", "a b/")
	f.Add("", "u", "3", "[::1]:80/?q=1#f")
	f.Add("x ", "u", "%zz", "a.test:bad/")
	f.Fuzz(func(t *testing.T, before, user, suffix, after string) {
		const marker = "PWsecret"
		word := func(s string) bool {
			return !strings.ContainsAny(s, ":@/?#") && !strings.ContainsFunc(s, unicode.IsSpace) && !strings.Contains(s, marker)
		}
		if !word(user) || !word(suffix) || strings.Contains(before+after, marker) || strings.Contains(before, "://") ||
			(before != "" && !strings.HasSuffix(before, " ")) {
			t.Skip()
		}
		password := marker + suffix
		raw := before + "http://" + user + ":" + password + "@" + after
		tg := parseTarget(raw, polite.DomainKey)
		shown := describe(result{target: tg, err: tg.err, status: 200})
		assert.NotContains(t, shown, password, "raw %q", raw)
	})
}
