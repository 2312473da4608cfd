package readmap

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMap(t *testing.T) {
	var m Map[int]
	_, ok := m.Load("a")
	assert.False(t, ok)
	v, loaded := m.LoadOrStore("a", 1)
	assert.Equal(t, 1, v)
	assert.False(t, loaded)
	v, loaded = m.LoadOrStore("a", 2)
	assert.Equal(t, 1, v, "the first value stays")
	assert.True(t, loaded)
	for i := range 100 {
		m.LoadOrStore(fmt.Sprint(i), i)
		for j := range i { // reads promote the dirty map now and then
			v, ok := m.Load(fmt.Sprint(j))
			require.True(t, ok)
			require.Equal(t, j, v)
		}
	}
	assert.Equal(t, 101, count(&m))
	m.DeleteFunc(func(k string, v int) bool { return v%2 == 1 })
	assert.Equal(t, 50, count(&m), "a, 1, 3, ... 99 deleted")
	_, ok = m.Load("3")
	assert.False(t, ok, "deleted")
	v, ok = m.Load("4")
	assert.True(t, ok)
	assert.Equal(t, 4, v)
	seen := 0
	m.Range(func(k string, v int) bool {
		seen++
		m.Load(k) // f may use the map
		return true
	})
	assert.Equal(t, 50, seen)
}

func TestMapConcurrent(t *testing.T) {
	var m Map[int]
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				k := fmt.Sprint(i)
				v, _ := m.LoadOrStore(k, i)
				assert.Equal(t, i, v)
				if g == 0 && i%100 == 99 {
					m.DeleteFunc(func(_ string, v int) bool { return v < i-50 })
				}
			}
		})
	}
	wg.Wait()
}

// count counts m's keys.
func count(m *Map[int]) int {
	n := 0
	m.Range(func(string, int) bool {
		n++
		return true
	})
	return n
}
