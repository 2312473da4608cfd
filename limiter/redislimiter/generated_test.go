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
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

var (
	scenarios = flag.Int("scenarios", 300, "how many scenarios TestGeneratedScriptsMatchMemory generates")
	firstSeed = flag.Uint64("seed", 1, "the seed of TestGeneratedScriptsMatchMemory's first scenario")
)

// TestGeneratedScriptsMatchMemory drives limiter.Memory as limiter.Wait
// does, at random (random rules, with jitter, adaptive pacing and error
// statuses; reservations, some with a longest wait; wake-ups on time or
// late, confirming and waiting again while Confirm moves the turn; turns
// that come at once but whose requests leave late; cancels in any order; 429s with a Retry-After; what servers say: Crawl-delays,
// latencies, error statuses, transport failures; state reads; once, a
// quota list that loses a quota; the key's state lost, while no turn
// waits; each call told of the latest start, as a Transport tells it; one
// jitter sample per step), then replays every step on a Limiter with the
// scripts' clock and its own set to each step's time and the step's jitter
// sample, and checks that they agree to the microsecond on every wait and
// reason. It runs the scripts without slip, which only they have, and with
// it, on wake-ups on time or later than slip, where the waits may differ
// by slip: the scripts do not make a wait of up to slip that the starts
// made ask for, as confirm.lua says (Memory's caller wakes on time after
// such a wait, since the scripts' request went). Run more with
// go test -run TestGeneratedScriptsMatchMemory -scenarios 5000 [-seed N].
func TestGeneratedScriptsMatchMemory(t *testing.T) {
	srv := redistest.Start(t)
	t.Run("without slip", func(t *testing.T) {
		runGenerated(t, newFakeClockOf(t, srv, testClockWithoutSlip), 0)
	})
	t.Run("with slip", func(t *testing.T) {
		f := newFakeClock(t, srv)
		f.slack = slip
		runGenerated(t, f, slip)
	})
}

// runGenerated generates the scenarios and replays them on f, whose
// scripts take starts late by up to slip as on time.
func runGenerated(t *testing.T, f *fakeClock, slip time.Duration) {
	for i := range *scenarios {
		seed := *firstSeed + uint64(i)
		rng := rand.New(rand.NewPCG(seed, 30))
		rule := randomRule(rng)
		key := fmt.Sprintf("generated%d-slip%v.example", seed, slip)
		var steps []step
		var memory []memoryStep
		synctest.Test(t, func(t *testing.T) {
			steps, memory = generateSteps(t, rng, key, rule, slip)
		})
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			if !replay(t, f, key, rule, steps, memory) {
				t.Logf("rule %s, steps:\n%s", describeRule(rule), describeSteps(steps))
			}
		})
	}
}

// randomRule returns a rule: a bucket, a min delay and up to two quotas,
// each present or not, and what addJitterAndFeedback adds, with times in whole
// microseconds.
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
	addJitterAndFeedback(rng, &rule)
	return rule
}

// generateSteps makes random steps on key under rule, driven as
// limiter.Wait drives a limiter, and runs them on a limiter.Memory; it
// runs in a synctest bubble. A late wake-up is later than slip.
func generateSteps(t *testing.T, rng *rand.Rand, key string, rule limiter.Rule, slip time.Duration) ([]step, []memoryStep) {
	type caller struct {
		turn            int           // the step that reserved
		wake            time.Duration // when it confirms
		waited, maxWait time.Duration
	}
	run := newMemoryRun(t, key, rule)
	var steps []step
	do := func(s step) *memoryStep {
		s.sample = randomSample(rng, &rule)
		steps = append(steps, s)
		return run.do(s)
	}
	late := func() time.Duration {
		if rng.IntN(5) < 3 {
			return 0
		}
		return slip + time.Duration(1+rng.Int64N(200_000))*time.Microsecond
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
				// A wait of up to slip the scripts do not make: their
				// request went at this confirm, so Memory's goes when its
				// wait is over, not late, and the two departures differ by
				// no more than slip.
				c.wake += more
				if more > slip {
					c.wake += late()
				}
			}
		}
		now = next
		switch op := rng.IntN(24); {
		case op < 9:
			var maxWait time.Duration
			if rng.IntN(4) == 0 {
				maxWait = time.Duration(1+rng.Int64N(2_000_000)) * time.Microsecond
			}
			leavesLate := rng.IntN(4) == 0
			o := do(step{at: now, op: "reserve", maxWait: maxWait, rule: changed, lastStart: last.lastStart, knowsLast: last.knowsLast,
				leavesLate: leavesLate})
			switch {
			case o.res.OK() && o.wait > 0:
				callers = append(callers, &caller{turn: len(steps) - 1, wake: now + o.wait + late(), waited: o.wait, maxWait: maxWait})
			case o.res.OK() && leavesLate:
				// Its turn came at once, but its request leaves later,
				// before any other request leaves: the scripts noted its
				// departure when they granted it, and take it back only
				// while it is the latest noted (a later one would keep both,
				// which is stricter than Memory, which notes it only when it
				// leaves).
				soonest := now + 200*time.Millisecond
				for _, c := range callers {
					soonest = min(soonest, c.wake)
				}
				// It leaves later than Memory's slack (10 ms), within which
				// Memory keeps the departure it noted, or at once.
				at := now
				if least := now + 10*time.Millisecond + time.Microsecond; soonest > least+time.Microsecond {
					at = least + time.Duration(rng.Int64N(int64((soonest-least)/time.Microsecond)))*time.Microsecond
				}
				turn := len(steps) - 1
				now = at
				if more := do(step{at: now, op: "confirm", turn: turn}).more; more > 0 {
					callers = append(callers, &caller{turn: turn, wake: now + more, waited: more})
				} else {
					last.lastStart, last.knowsLast = now, true
				}
			case o.res.OK():
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
		case op >= 20:
			do(step{at: now, op: "observe", observe: randomObservation(rng, key, &rule), rule: changed,
				lastStart: last.lastStart, knowsLast: last.knowsLast})
		}
	}
	return steps, run.out
}

func describeRule(rule limiter.Rule) string {
	return fmt.Sprintf("%+v", rule)
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
			if s.leavesLate {
				b.WriteString(" leaves late")
			}
		case "cancel", "confirm":
			fmt.Fprintf(&b, " turn %d", s.turn)
		case "pause":
			fmt.Fprintf(&b, " for %v", s.pause)
		case "observe":
			fmt.Fprintf(&b, " %+v", *s.observe)
		}
		if s.sample > 0 {
			fmt.Fprintf(&b, " jitter sample %v", s.sample)
		}
		if s.rule != nil {
			fmt.Fprintf(&b, " under %s", describeRule(*s.rule))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
