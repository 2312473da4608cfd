package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/polite-go/polite"
)

// target is one URL of the list to fetch.
type target struct {
	line int      // of the URL list; 0 for an argument
	raw  string   // as the user gave it
	url  *url.URL // nil when err is set
	key  string   // the domain key it is paced under
	err  error    // why it cannot be fetched
}

// maxLine is the longest line of a URL list, in bytes: far longer than
// any URL a server takes (most stop at 8 KiB).
const maxLine = 64 << 10

// maxQuoted is about the most bytes of its input an error line quotes.
const maxQuoted = 200

// line is one usable line of a URL list: its number, from 1, and its
// text with surrounding spaces trimmed; or why the line cannot be used.
type line struct {
	n    int
	text string
	err  error
}

// lineReader reads a URL list one line at a time, as the crawl needs
// them, so that the list is never held whole. Blank lines and lines that
// start with "#" are skipped; a UTF-8 byte-order mark at the start is
// skipped. A line with a space inside, or longer than maxLine, is
// unusable: it comes with an error naming it, and the lines after it are
// read as usual.
type lineReader struct {
	r    *bufio.Reader
	n    int  // lines read
	done bool // the list has ended, or could not be read further
}

// newLineReader returns a lineReader over r, or an error if r starts with
// a UTF-16 byte-order mark: every line of it would be unusable.
func newLineReader(r io.Reader) (*lineReader, error) {
	br := bufio.NewReaderSize(r, maxLine+len("\r\n"))
	if start, _ := br.Peek(2); string(start) == "\xff\xfe" || string(start) == "\xfe\xff" {
		return nil, errors.New("reading stdin: it is UTF-16 text (it starts with a UTF-16 byte-order mark); want UTF-8")
	}
	return &lineReader{r: br}, nil
}

// next returns the next line that is not blank or a comment, and false
// once the list has ended. A list that cannot be read further ends with
// a line whose error says why.
func (l *lineReader) next() (line, bool) {
	for !l.done {
		raw, tooLong, err := l.readLine()
		if err != nil && err != io.EOF {
			l.done = true
			return line{n: l.n + 1, err: fmt.Errorf("reading stdin: %w", err)}, true
		}
		l.done = err == io.EOF
		if raw == nil && l.done {
			break
		}
		l.n++
		if tooLong {
			return line{n: l.n, err: fmt.Errorf("longer than %d KiB", maxLine>>10)}, true
		}
		text := string(raw)
		if l.n == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
			return line{n: l.n, err: fmt.Errorf("more than one URL (%s, then %s): give one URL per line",
				quoteInput(redact(text[:i])), quoteInput(redact(strings.TrimSpace(text[i:]))))}, true
		}
		return line{n: l.n, text: text}, true
	}
	return line{}, false
}

// readLine reads one line without its end, and reports whether it was
// longer than maxLine, in which case the rest of it is skipped. raw is
// nil at the end of the input.
func (l *lineReader) readLine() (raw []byte, tooLong bool, err error) {
	raw, err = l.r.ReadSlice('\n')
	for err == bufio.ErrBufferFull {
		tooLong = true
		_, err = l.r.ReadSlice('\n')
	}
	if len(raw) == 0 && err != nil {
		return nil, tooLong, err
	}
	raw = bytes.TrimSuffix(raw, []byte("\n"))
	raw = bytes.TrimSuffix(raw, []byte("\r"))
	return raw, tooLong || len(raw) > maxLine, err
}

// quoteInput quotes s, as %q does, or the start of it and its length when it
// is longer than maxQuoted bytes, so that an error line stays short.
func quoteInput(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted / 2
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// failure says why t cannot be fetched, naming its line of the URL list
// if it came from one.
func failure(t target) string {
	if t.line > 0 {
		return fmt.Sprintf("line %d: %v", t.line, t.err)
	}
	return t.err.Error()
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
	shown := quoteInput(redact(raw))
	switch {
	case err != nil:
		t.err = fmt.Errorf("bad URL %s: %w", shown, errors.Unwrap(err))
	case u.Scheme == "":
		t.err = fmt.Errorf("bad URL %s: no scheme (want http:// or https://)", shown)
	case u.Scheme != "http" && u.Scheme != "https":
		t.err = fmt.Errorf("bad URL %s: scheme %s is not http or https", shown, quoteInput(u.Scheme))
	case u.Host == "":
		t.err = fmt.Errorf("bad URL %s: no host", shown)
	case strings.ContainsFunc(raw, unicode.IsSpace):
		t.err = fmt.Errorf("bad URL %s: a space inside (give one URL per argument)", shown)
	}
	if t.err != nil {
		return t
	}
	k, err := key(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}})
	if err != nil {
		t.err = fmt.Errorf("bad URL %s: %w", shown, err)
		return t
	}
	t.url, t.key = u, k
	return t
}
