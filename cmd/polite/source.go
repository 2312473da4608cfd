package main

import (
	"errors"
	"io"
)

// argsOrStdin returns the source of the URLs in args, or, when there are
// none, of the lines of stdin, read as the crawl goes (see lineReader),
// each made a target by parse. It reads stdin up to its first URL: an
// error if there is none.
func argsOrStdin(args []string, stdin io.Reader, parse func(raw string) target) (source, error) {
	if len(args) > 0 {
		return parsedList(args, parse), nil
	}
	lines, err := newLineReader(stdin)
	if err != nil {
		return nil, err
	}
	first, ok := lines.next()
	if !ok {
		return nil, errNoURLs
	}
	return &lineSource{lines: lines, parse: parse, first: &first}, nil
}

// errNoURLs is the error for a command given no URL.
var errNoURLs = errors.New("no URLs: give them as arguments or on stdin, one per line")

// source gives a crawl its targets one at a time, so that a long URL list
// is read as the crawl goes rather than held whole.
type source interface {
	// next returns the next target, and false once there is none.
	next() (target, bool)
	// total is the number of targets, or -1 if it is not known yet.
	total() int
}

// listSource is a source over targets already held: the arguments, or the
// demo's pages.
type listSource struct {
	targets []target
	i       int
}

func (l *listSource) next() (target, bool) {
	if l.i == len(l.targets) {
		return target{}, false
	}
	l.i++
	t := l.targets[l.i-1]
	l.targets[l.i-1] = target{} // held by the crawl from now on
	return t, true
}

func (l *listSource) total() int { return len(l.targets) }

// parsedList is the source of raw URLs, each made a target by parse.
func parsedList(raws []string, parse func(raw string) target) *listSource {
	targets := make([]target, len(raws))
	for i, raw := range raws {
		targets[i] = parse(raw)
	}
	return &listSource{targets: targets}
}

// lineSource parses the lines of a URL list into targets as the crawl
// asks for them. An unusable line is a target with its error.
type lineSource struct {
	lines *lineReader
	parse func(raw string) target
	first *line // read already, to know the list is not empty
}

func (s *lineSource) next() (target, bool) {
	l := s.first
	if l != nil {
		s.first = nil
	} else {
		next, ok := s.lines.next()
		if !ok {
			return target{}, false
		}
		l = &next
	}
	if l.err != nil {
		return target{line: l.n, err: l.err}, true
	}
	t := s.parse(l.text)
	t.line = l.n
	return t, true
}

func (s *lineSource) total() int { return -1 }
