package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/polite-go/polite"
)

// target is one URL of the list to fetch.
type target struct {
	raw string   // as the user gave it
	url *url.URL // nil when err is set
	key string   // the domain key it is paced under
	err error    // why it cannot be fetched
}

// The bounds of a URL list. A line is far longer than any URL a server
// takes (most stop at 8 KiB); the list and its count keep the memory the
// command needs, a few hundred bytes per URL, under a few hundred MB.
const (
	maxLine = 64 << 10  // bytes in one line
	maxList = 128 << 20 // bytes in the whole list
	maxURLs = 1_000_000 // URLs, from stdin or the arguments
)

// readLines reads one item per line, skipping blank lines and lines that
// start with "#", with surrounding spaces trimmed; a line with a space
// inside holds more than one item, an error naming the line. A UTF-8 byte-order mark
// at the start is skipped; UTF-16 text, a line longer than maxLine, more
// than maxList bytes or more than maxURLs items are errors, found before
// the rest of the input is read.
func readLines(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(&boundedReader{r: r, left: maxList})
	sc.Buffer(make([]byte, 0, 4<<10), maxLine+len("\r\n"))
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			if strings.HasPrefix(text, "\xff\xfe") || strings.HasPrefix(text, "\xfe\xff") {
				return nil, errors.New("reading stdin: it is UTF-16 text (it starts with a UTF-16 byte-order mark); want UTF-8")
			}
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if len(text) > maxLine {
			return nil, fmt.Errorf("reading stdin: line %d is longer than %d KiB", line, maxLine>>10)
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
			return nil, fmt.Errorf("reading stdin: line %d holds more than one URL (%q, then %q): give one URL per line", line, redact(text[:i]), redact(strings.TrimSpace(text[i:])))
		}
		if len(out) == maxURLs {
			return nil, fmt.Errorf("reading stdin: more than %d URLs", maxURLs)
		}
		out = append(out, text)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("reading stdin: line %d is longer than %d KiB", line+1, maxLine>>10)
	case err != nil:
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	return out, nil
}

// errListTooLong is the error for a URL list of more than maxList bytes.
var errListTooLong = fmt.Errorf("more than %d MiB", maxList>>20)

// boundedReader reads from r until left bytes are read, then fails with
// errListTooLong.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more says whether the list ends exactly at the bound.
		var one [1]byte
		if n, _ := io.ReadFull(b.r, one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, errListTooLong
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// urlsOrStdin returns args, or, when there are none, the lines of stdin
// (see readLines); an error if that leaves no URL, or too many.
func urlsOrStdin(args []string, stdin io.Reader) ([]string, error) {
	if len(args) > maxURLs {
		return nil, fmt.Errorf("more than %d URLs", maxURLs)
	}
	if len(args) > 0 {
		return args, nil
	}
	urls, err := readLines(stdin)
	if err == nil && len(urls) == 0 {
		err = errors.New("no URLs: give them as arguments or on stdin, one per line")
	}
	return urls, err
}

// shown is the target's URL as printed: its password, if any, redacted.
func (t target) shown() string {
	if t.url != nil {
		return t.url.Redacted()
	}
	return redact(t.raw)
}

// redact returns raw with the password of its userinfo, if any, replaced
// by "xxxxx", as url.URL.Redacted does, even when raw does not parse; raw
// holding spaces is redacted word by word, since each may be a URL.
func redact(raw string) string {
	if words := strings.Fields(raw); len(words) > 1 || len(words) == 1 && words[0] != raw {
		for i, w := range words {
			words[i] = redact(w)
		}
		return strings.Join(words, " ")
	}
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	authority := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		authority = rest[:end]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(authority[:at], ":")
	if !hasPassword {
		return raw
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// parseTarget parses raw as an http or https URL and keys it with key.
// Errors show the URL redacted.
func parseTarget(raw string, key polite.KeyFunc) target {
	t := target{raw: raw}
	u, err := url.Parse(raw)
	shown := redact(raw)
	switch {
	case err != nil:
		t.err = fmt.Errorf("bad URL %q: %w", shown, errors.Unwrap(err))
	case u.Scheme == "":
		t.err = fmt.Errorf("bad URL %q: no scheme (want http:// or https://)", shown)
	case u.Scheme != "http" && u.Scheme != "https":
		t.err = fmt.Errorf("bad URL %q: scheme %q is not http or https", shown, u.Scheme)
	case u.Host == "":
		t.err = fmt.Errorf("bad URL %q: no host", shown)
	case strings.ContainsFunc(raw, unicode.IsSpace):
		t.err = fmt.Errorf("bad URL %q: a space inside (give one URL per argument)", shown)
	}
	if t.err != nil {
		return t
	}
	k, err := key(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}})
	if err != nil {
		t.err = fmt.Errorf("bad URL %q: %w", shown, err)
		return t
	}
	t.url, t.key = u, k
	return t
}
