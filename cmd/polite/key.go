package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/polite-go/polite"
)

const keySynopsis = `polite key [-host] URL...

Prints the key each URL is paced under, one per line: the name to use for
it under "domains" in a config file. By default that is the registrable
domain (polite.DomainKey: www.example.co.uk -> example.co.uk); with -host,
the host (polite.HostKey). A URL without a scheme is read as http://URL.
Without arguments, URLs are read from stdin, one per line. Exit status 1
if some URL has no key (reported on stderr), 2 for bad usage.`

func runKey(args []string, e env) int {
	fs := newFlagSet("polite key", keySynopsis)
	host := fs.Bool("host", false, "print the host key (polite.HostKey) instead of the domain key")
	urls, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, fs, err)
	}
	if len(urls) == 0 {
		if urls, err = readLines(e.stdin); err != nil {
			return fatal(e, "polite key", err)
		}
	}
	if len(urls) == 0 {
		return usageError(e, fs, errors.New("no URLs: give them as arguments or on stdin, one per line"))
	}
	keyFunc := polite.DomainKey
	if *host {
		keyFunc = polite.HostKey
	}
	code := exitOK
	for _, raw := range urls {
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		t := parseTarget(raw, keyFunc)
		if t.err != nil {
			fmt.Fprintf(e.stderr, "polite key: %v\n", t.err)
			code = exitFailed
			continue
		}
		fmt.Fprintln(e.stdout, t.key)
	}
	return code
}
