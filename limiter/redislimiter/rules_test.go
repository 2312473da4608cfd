package redislimiter

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestManyRulesEachKeepTheirOwn checks that the scripts read every rule
// as its own, past the number of rules the library keeps parsed
// (max_rules in state.lua), and again once it has forgotten them.
func TestManyRulesEachKeepTheirOwn(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeClock(t, srv)
	f.at(t, 0)
	ctx := context.Background()
	const rules = 1100
	gap := func(i int) time.Duration { return time.Duration(i+1) * time.Millisecond }
	for pass, keys := range []int{rules, 10} {
		for i := range keys {
			rule := limiter.Rule{MinDelay: gap(i)}
			key := "k" + strconv.Itoa(pass) + "-" + strconv.Itoa(i)
			_, err := reserveScript(ctx, f.Limiter, key, &rule, 0, 0)
			require.NoError(t, err)
			res, err := reserveScript(ctx, f.Limiter, key, &rule, 0, 0)
			require.NoError(t, err)
			require.Equal(t, gap(i), res.wait, "pass %d, rule %d", pass, i)
		}
	}
}
