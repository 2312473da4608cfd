package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// newFlagSet returns a flag set that reports errors to its caller instead
// of printing them, so that a bad flag is one line on stderr.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags wherever they stand among the arguments, as in
// "polite fetch URL -json", and returns the other arguments in order.
// Everything after "--" is an argument.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if consumed := len(args) - len(left); consumed > 0 && args[consumed-1] == "--" {
			return append(rest, left...), nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// usageError reports bad usage of the command named name: one line on
// stderr, exit code 2. Help goes to stdout with exit code 0.
func usageError(e env, fs *flag.FlagSet, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.stdout)
		fs.Usage()
		return exitOK
	}
	fmt.Fprintf(e.stderr, "%s: %s (%s -h for help)\n", fs.Name(), oneLine(err.Error()), fs.Name())
	return exitUsage
}

// oneLine escapes the control characters of msg, such as a line break in
// a file name or a flag's value, so that it prints as one line.
func oneLine(msg string) string {
	if !strings.ContainsFunc(msg, unicode.IsControl) {
		return msg
	}
	var b strings.Builder
	for _, r := range msg {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r) // '\n', '\x1b'
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
