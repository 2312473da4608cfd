package lru

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keys(l *List[string, int]) []string {
	var out []string
	for e := range l.All {
		out = append(out, e.Key)
	}
	return out
}

func TestOrderFollowsUse(t *testing.T) {
	var l List[string, int]
	for i, k := range []string{"a", "b", "c"} {
		l.Add(k).Value = i
	}
	require.Equal(t, []string{"c", "b", "a"}, keys(&l))
	assert.Equal(t, 0, l.Get("a").Value)
	assert.Equal(t, []string{"a", "c", "b"}, keys(&l))
	assert.Equal(t, 1, l.Peek("b").Value)
	assert.Equal(t, []string{"a", "c", "b"}, keys(&l), "Peek leaves the order")
	assert.Nil(t, l.Get("x"))
	l.Remove(l.Peek("c"))
	assert.Equal(t, []string{"a", "b"}, keys(&l))
	assert.Equal(t, 2, l.Len())
}

func TestTrimDropsTheOldestThatMayGo(t *testing.T) {
	var l List[string, int]
	for i := range 6 {
		l.Add(fmt.Sprint(i)).Value = i
	}
	odd := func(e *Entry[string, int]) bool { return e.Value%2 == 1 }
	l.Trim(4, 3, odd) // looks at 0 (kept), 1 (goes), 2 (kept)
	assert.Equal(t, []string{"2", "0", "5", "4", "3"}, keys(&l))
	l.Trim(4, 10, odd) // 3 goes, and the table is small enough
	assert.Equal(t, []string{"2", "0", "5", "4"}, keys(&l))
	l.Trim(0, 10, func(*Entry[string, int]) bool { return false })
	assert.Equal(t, 4, l.Len(), "nothing may go: the look bounds the work")
}

func TestRemoveFromEitherEnd(t *testing.T) {
	var l List[string, int]
	for _, k := range []string{"a", "b", "c", "d"} {
		l.Add(k)
	}
	l.Remove(l.Peek("d")) // the most recently used
	l.Remove(l.Peek("a")) // the least
	assert.Equal(t, []string{"c", "b"}, keys(&l))
	l.Trim(1, 1, func(*Entry[string, int]) bool { return true })
	assert.Equal(t, []string{"c"}, keys(&l), "b was the least recently used left")
	l.Remove(l.Peek("c"))
	assert.Empty(t, keys(&l))
	l.Add("e")
	l.Add("f")
	assert.Equal(t, []string{"f", "e"}, keys(&l), "an emptied List works again")
}

func TestReuseTakesARemovedEntry(t *testing.T) {
	var l List[string, int]
	for i, k := range []string{"a", "b", "c"} {
		l.Add(k).Value = i
	}
	old := l.Peek("a")
	l.Remove(old)
	e := l.Reuse(old, "d")
	assert.Same(t, old, e)
	assert.Equal(t, []string{"d", "c", "b"}, keys(&l))
	assert.Equal(t, 0, l.Get("d").Value, "the value is the caller's to make")
	assert.Nil(t, l.Peek("a"))
	assert.Equal(t, 3, l.Len())
}
