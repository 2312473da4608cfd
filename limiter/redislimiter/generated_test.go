package redislimiter

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/redistest"
	"github.com/polite-go/polite/limiter"
)

var (
	scenarios = flag.Int("scenarios", 300, "how many scenarios TestGeneratedScriptsMatchMemory generates")
	firstSeed = flag.Uint64("seed", 1, "the seed of TestGeneratedScriptsMatchMemory's first scenario")
)

// TestGeneratedScriptsMatchMemory drives limiter.Memory as limiter.Wait
// does, at random (random rules; reservations, some with a longest wait;
// wake-ups on time or late, confirming and waiting again while Confirm
// moves the turn; cancels in any order; 429s with a Retry-After; state
// reads; once, a quota list that loses a quota; the key's state lost,
// while no turn waits; each reservation and state read told of the latest
// start, as a Transport tells it), then replays every step
// on the scripts with their clock set to each step's time, and checks that
// they agree to the microsecond on every wait and reason. The scripts run
// without slip, which only they have. Run more with
// go test -run TestGeneratedScriptsMatchMemory -scenarios 5000 [-seed N].
func TestGeneratedScriptsMatchMemory(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeClockOf(t, srv, testClockWithoutSlip)
	for i := range *scenarios {
		seed := *firstSeed + uint64(i)
		rng := rand.New(rand.NewPCG(seed, 30))
		rule := randomRule(rng)
		key := fmt.Sprintf("generated%d.example", seed)
		var steps []step
		var memory []memoryStep
		synctest.Test(t, func(t *testing.T) {
			steps, memory = generateSteps(t, rng, key, rule)
		})
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			if !replay(t, f, key, rule, steps, memory) {
				t.Logf("rule %s, steps:\n%s", describeRule(rule), describeSteps(steps))
			}
		})
	}
}

// randomRule returns a rule without jitter: a bucket, a min delay and up
// to two quotas, each present or not, with times in whole microseconds.
func randomRule(rng *rand.Rand) limiter.Rule {
	micros := func(most time.Duration) time.Duration {
		return time.Duration(1+rng.Int64N(int64(most/time.Microsecond))) * time.Microsecond
	}
	var rule limiter.Rule
	if rng.IntN(3) > 0 {
		rule.Rate = []float64{0.5, 1, 2, 3, 4, 7.3, 10, 25}[rng.IntN(8)]
		rule.Burst = 1 + rng.IntN(4)
	}
	if rng.IntN(2) == 0 {
		rule.MinDelay = micros(300 * time.Millisecond)
	}
	for range rng.IntN(3) {
		rule.Quotas = append(rule.Quotas, config.Quota{Requests: 1 + rng.IntN(5), Window: micros(3 * time.Second)})
	}
	return rule
}

// generateSteps makes random steps on key under rule, driven as
// limiter.Wait drives a limiter, and runs them on a limiter.Memory; it
// runs in a synctest bubble.
func generateSteps(t *testing.T, rng *rand.Rand, key string, rule limiter.Rule) ([]step, []memoryStep) {
	type caller struct {
		turn            int           // the step that reserved
		wake            time.Duration // when it confirms
		waited, maxWait time.Duration
	}
	run := newMemoryRun(t, key, rule)
	var steps []step
	do := func(s step) *memoryStep {
		steps = append(steps, s)
		return run.do(s)
	}
	late := func() time.Duration {
		if rng.IntN(5) < 3 {
			return 0
		}
		return time.Duration(1+rng.Int64N(200_000)) * time.Microsecond
	}
	var callers []*caller
	var changed *limiter.Rule // the rule from the quota change on
	var last step             // its lastStart and knowsLast: the latest start made
	now := time.Duration(0)
	for len(steps) < 40 {
		next := now + time.Duration(rng.Int64N(250_000))*time.Microsecond
		for len(callers) > 0 {
			c := slices.MinFunc(callers, func(a, b *caller) int { return int(a.wake - b.wake) })
			if c.wake > next {
				break
			}
			more := do(step{at: c.wake, op: "confirm", turn: c.turn}).more
			switch {
			case more == 0:
				last.lastStart, last.knowsLast = c.wake, true
				callers = slices.DeleteFunc(callers, func(x *caller) bool { return x == c })
			case c.maxWait > 0 && c.waited+more > c.maxWait:
				do(step{at: c.wake, op: "cancel", turn: c.turn})
				callers = slices.DeleteFunc(callers, func(x *caller) bool { return x == c })
			default:
				c.waited += more
				c.wake += more + late()
			}
		}
		now = next
		switch op := rng.IntN(20); {
		case op < 9:
			var maxWait time.Duration
			if rng.IntN(4) == 0 {
				maxWait = time.Duration(1+rng.Int64N(2_000_000)) * time.Microsecond
			}
			o := do(step{at: now, op: "reserve", maxWait: maxWait, rule: changed, lastStart: last.lastStart, knowsLast: last.knowsLast})
			switch {
			case o.res.OK && o.wait > 0:
				callers = append(callers, &caller{turn: len(steps) - 1, wake: now + o.wait + late(), waited: o.wait, maxWait: maxWait})
			case o.res.OK:
				last.lastStart, last.knowsLast = now, true
			}
		case op < 11 && len(callers) > 0:
			i := rng.IntN(len(callers))
			do(step{at: now, op: "cancel", turn: callers[i].turn})
			callers = slices.Delete(callers, i, i+1)
		case op < 13:
			do(step{at: now, op: "pause", pause: time.Duration(1+rng.Int64N(1_000_000)) * time.Microsecond, rule: changed,
				lastStart: last.lastStart, knowsLast: last.knowsLast})
		case op < 16:
			do(step{at: now, op: "state", rule: changed, lastStart: last.lastStart, knowsLast: last.knowsLast})
		case op == 16 && changed == nil && len(callers) == 0 && len(rule.Quotas) > 0:
			fewer := rule
			fewer.Quotas = slices.Delete(slices.Clone(rule.Quotas), 0, 1)
			changed = &fewer
		case op == 17 && len(callers) == 0:
			do(step{at: now, op: "forget"})
		}
	}
	return steps, run.out
}

func describeRule(rule limiter.Rule) string {
	return fmt.Sprintf("{Rate: %v, Burst: %d, MinDelay: %v, Quotas: %v}", rule.Rate, rule.Burst, rule.MinDelay, rule.Quotas)
}

func describeSteps(steps []step) string {
	var b strings.Builder
	for j, s := range steps {
		fmt.Fprintf(&b, "  %d: %s at %v", j, s.op, s.at)
		switch s.op {
		case "reserve":
			if s.maxWait > 0 {
				fmt.Fprintf(&b, " max wait %v", s.maxWait)
			}
		case "cancel", "confirm":
			fmt.Fprintf(&b, " turn %d", s.turn)
		case "pause":
			fmt.Fprintf(&b, " for %v", s.pause)
		}
		if s.rule != nil {
			fmt.Fprintf(&b, " under %s", describeRule(*s.rule))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
