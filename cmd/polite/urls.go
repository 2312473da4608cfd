package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/polite-go/polite"
)

// target is one URL of the list to fetch.
type target struct {
	raw string   // as the user gave it
	url *url.URL // nil when err is set
	key string   // the domain key it is paced under
	err error    // why it cannot be fetched
}

// maxLine is the longest line readLines accepts.
const maxLine = 1 << 20

// readLines reads one item per line, skipping blank lines and lines that
// start with "#", with surrounding spaces trimmed.
func readLines(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	return out, nil
}

// urlsOrStdin returns args, or, when there are none, the lines of stdin
// (see readLines); an error if that leaves no URL.
func urlsOrStdin(args []string, stdin io.Reader) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	urls, err := readLines(stdin)
	if err == nil && len(urls) == 0 {
		err = errors.New("no URLs: give them as arguments or on stdin, one per line")
	}
	return urls, err
}

// parseTarget parses raw as an http or https URL and keys it with key.
func parseTarget(raw string, key polite.KeyFunc) target {
	t := target{raw: raw}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		t.err = fmt.Errorf("bad URL %q: %w", raw, errors.Unwrap(err))
	case u.Scheme == "":
		t.err = fmt.Errorf("bad URL %q: no scheme (want http:// or https://)", raw)
	case u.Scheme != "http" && u.Scheme != "https":
		t.err = fmt.Errorf("bad URL %q: scheme %q is not http or https", raw, u.Scheme)
	case u.Host == "":
		t.err = fmt.Errorf("bad URL %q: no host", raw)
	}
	if t.err != nil {
		return t
	}
	k, err := key(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}})
	if err != nil {
		t.err = fmt.Errorf("bad URL %q: %w", raw, err)
		return t
	}
	t.url, t.key = u, k
	return t
}
