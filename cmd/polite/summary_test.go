package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSummarySaysOneURL(t *testing.T) {
	assert.Equal(t, "1 URL in 2s: 1 fetched, 0 failed", summary{total: 1, fetched: 1, elapsed: 2 * time.Second}.String())
	assert.Equal(t, "3 URLs in 2s: 2 fetched, 1 failed", summary{total: 3, fetched: 2, failed: 1, elapsed: 2 * time.Second}.String())
}
