package main

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/polite-go/polite"
)

// retryStatus reports whether a response's status asks the client to come
// back later: 429 Too Many Requests, and the 5xx answers of a struggling
// server (500, 502, 503, 504, and Cloudflare's 522 and 524), as in
// Scrapy's RETRY_HTTP_CODES.
func retryStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout,
		522, 524:
		return true
	}
	return false
}

// comeBack reports whether an attempt's outcome asks for the URL to be
// tried again later: a status retryStatus names, a robots.txt that could
// not be fetched, or a transport failure (a refused or reset connection,
// a timeout, a body cut short). polite's own refusals (a wait cancelled
// or too long, a path robots.txt disallows), a host name that does not
// resolve, a domain given up and a body that could not be saved are
// final.
func comeBack(r result) bool {
	switch {
	case r.err == nil:
		return retryStatus(r.status)
	case errors.Is(r.err, polite.ErrRobotsUnreachable):
		return true
	case r.saving, errors.Is(r.err, polite.ErrDisallowed), errors.Is(r.err, polite.ErrGivenUp), errors.Is(r.err, context.Canceled):
		return false
	}
	var we *polite.WaitError
	var dns *net.DNSError
	return !errors.As(r.err, &we) && !(errors.As(r.err, &dns) && dns.IsNotFound)
}
