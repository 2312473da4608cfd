package main

import (
	"net/http"

	"github.com/polite-go/polite/frontier"
)

// comeBack reports whether an attempt's outcome asks for the URL to be
// tried again later, as frontier.Retryable says; a body that could not be
// saved is final.
func comeBack(r result) bool {
	return !r.saving && frontier.Retryable(r.status, r.err)
}

// response is r's answer as frontier.Done reads it: its status, if a
// response came (its body was read or saved already).
func (r result) response() *http.Response {
	if r.status == 0 {
		return nil
	}
	return &http.Response{StatusCode: r.status}
}
