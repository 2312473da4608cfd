package polite

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostCache(t *testing.T) {
	c := hostCache{limit: 100}
	_, ok := c.load("a.com")
	assert.False(t, ok)
	a, b := &domain{key: "a.com"}, &domain{key: "b.com"}
	c.store("a.com", a)
	got, ok := c.load("a.com")
	require.True(t, ok, "a stored host is found before any promotion")
	assert.Same(t, a, got)
	// Enough misses promote the dirty map: then a lookup reads it without
	// the lock, and a new store keeps what was promoted.
	for range 3 {
		c.load("missing.com")
	}
	require.NotNil(t, c.read.Load(), "promoted")
	assert.Same(t, a, (*c.read.Load())["a.com"])
	c.store("b.com", b)
	got, _ = c.load("a.com")
	assert.Same(t, a, got)
	got, _ = c.load("b.com")
	assert.Same(t, b, got)
	c.clear()
	_, ok = c.load("a.com")
	assert.False(t, ok, "cleared")
}

func TestHostCacheLimit(t *testing.T) {
	c := hostCache{limit: 10}
	for i := range 1000 {
		host := fmt.Sprintf("h%d.com", i)
		c.store(host, &domain{key: host})
		c.load(host)
		c.load("missing.com")
		c.mu.Lock()
		n := len(c.dirty)
		c.mu.Unlock()
		require.LessOrEqual(t, n, 10)
		if m := c.read.Load(); m != nil {
			require.LessOrEqual(t, len(*m), 10)
		}
	}
}

func TestHostCacheConcurrent(t *testing.T) {
	c := hostCache{limit: 1 << 20}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				host := fmt.Sprintf("h%d.com", (i*7+g)%300)
				if d, ok := c.load(host); ok {
					require.Equal(t, host, d.key)
					continue
				}
				c.store(host, &domain{key: host})
			}
		}()
	}
	wg.Wait()
	for i := range 300 {
		host := fmt.Sprintf("h%d.com", i)
		d, ok := c.load(host)
		require.True(t, ok, host)
		assert.Equal(t, host, d.key)
	}
}
