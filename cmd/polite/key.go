package main

import (
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
	keyFunc := polite.DomainKey
	var src source
	if err == nil {
		if *host {
			keyFunc = polite.HostKey
		}
		src, err = argsOrStdin(urls, e.stdin, func(raw string) target {
			if !strings.Contains(raw, "://") {
				raw = "http://" + raw
			}
			return parseTarget(raw, keyFunc)
		})
	}
	if err != nil {
		return usageError(e, fs, err)
	}
	code := exitOK
	for t, ok := src.next(); ok; t, ok = src.next() {
		if t.err != nil {
			fmt.Fprintf(e.stderr, "polite key: %v\n", oneLine(failure(t)))
			code = exitFailed
			continue
		}
		fmt.Fprintln(e.stdout, t.key)
	}
	return code
}
