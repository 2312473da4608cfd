package redislimiter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// order returns r's keys from the most to the least recently used.
func order(r *recentKeys) []string {
	var out []string
	for e := r.newest; e != nil; e = e.older {
		out = append(out, e.key)
	}
	return out
}

func TestRecentKeysOrderFollowsUse(t *testing.T) {
	var r recentKeys
	for _, k := range []string{"a", "b", "c"} {
		r.add(k)
	}
	assert.Equal(t, []string{"c", "b", "a"}, order(&r))
	assert.Equal(t, "a", r.get("a").key)
	assert.Equal(t, []string{"a", "c", "b"}, order(&r))
	assert.Nil(t, r.get("x"))
}

func TestRecentKeysTrimLooksAtTheOldestOnly(t *testing.T) {
	var r recentKeys
	for _, k := range []string{"a", "b", "c", "d"} {
		r.add(k).value.seeded = k != "b" // b must stay
	}
	r.trim(2, func(v *ownPace) bool { return v.seeded })
	assert.Equal(t, []string{"b", "d", "c"}, order(&r), "a went, b was kept and made the newest")
	r.trim(5, func(v *ownPace) bool { return v.seeded })
	assert.Equal(t, []string{"b"}, order(&r), "looking past b, c and d went")
	assert.Len(t, r.m, 1)
	r.get("b").value.expires = time.Unix(1, 0)
	assert.Equal(t, time.Unix(1, 0), r.get("b").value.expires, "the value stays in place")
}
