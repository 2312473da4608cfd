package domains

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type site struct {
	claim Claim
	key   string
}

func (s *site) Claimed() *Claim { return &s.claim }

func newSites(max int) *Table[site, *site] {
	return New(max, func(s *site, key string) { s.key = key })
}

func TestAcquireFindsOrMakesTheDomain(t *testing.T) {
	tab := newSites(10)
	a := tab.Acquire("a.com")
	require.Equal(t, "a.com", a.key)
	assert.Same(t, a, tab.Acquire("a.com"))
	got, ok := tab.Load("a.com")
	assert.True(t, ok)
	assert.Same(t, a, got)
	_, ok = tab.Load("b.com")
	assert.False(t, ok, "Load makes nothing")
}

func TestTableForgetsTheLeastRecentlyUsedThatNoneClaims(t *testing.T) {
	tab := newSites(3)
	claimed := tab.Acquire("claimed.com")
	for i := range 3 {
		tab.Acquire(fmt.Sprint(i, ".com")).claim.Release()
	}
	assert.Len(t, tab.All(), 3)
	_, ok := tab.Load("claimed.com")
	assert.True(t, ok, "a claimed domain stays")
	_, ok = tab.Load("0.com")
	assert.False(t, ok, "the least recently used free one went")

	claimed.claim.Release()
	for i := 3; i < 6; i++ {
		tab.Acquire(fmt.Sprint(i, ".com")).claim.Release()
	}
	_, ok = tab.Load("claimed.com")
	assert.False(t, ok, "released, it goes in its turn")
	assert.Len(t, tab.All(), 3)
}
