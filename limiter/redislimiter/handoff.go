package redislimiter

import (
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/limiter"
)

// handoff carries each domain's pace across the switches between Redis
// and the fallback, so that neither switch adds a burst. Turns that Redis
// granted this process still go after Redis stops answering, and turns the
// fallback granted still go after it answers again; so it counts, per
// domain, this process's own pace over both: its latest start and its own
// bucket's tokens right after it, on the local clock. When the fallback
// first paces a domain after Redis did, it is seeded to start there; when
// Redis paces a domain again after the fallback did, each reservation
// asks Redis for a start no earlier than this process's own pace allows
// (reserve.lua's not-before), until that time has passed.
//
// Starts granted by Redis are converted to the local clock as the time the
// call returned plus the wait: when the caller's timer fires. So the
// clocks need not agree, and each conversion errs late by the reply's
// trip, which only delays the turns after it. A start that goes later
// than granted (a late wake-up, a turn that the fallback's limiter.Memory
// moves when it is confirmed) moves the latest start with it when its turn
// is confirmed. The fallback's turns that still wait when Redis answers
// again will be moved too: the Memory moves each after the start before
// it, so each goes as late as the one before it went, and later again by
// its own wake-up; so the wait for them counts the latest one as late as
// the latest that went. What remains is a wake-up's lateness, as between
// two turns Redis grants.
//
// Memory is bounded as limiter.Memory bounds its own: a domain's entry may
// be dropped once this process's own pace has fully recovered from its
// latest start (a full bucket, min delay and jitter over), when it changes
// nothing. Each new domain looks at the look least recently used entries
// of its shard and drops those. So only domains this process used in the
// recent past cost memory.
//
// A handoff is safe for concurrent use.
type handoff struct {
	seed     maphash.Seed
	fellBack atomic.Int64 // entries with fellBack set: none, and Redis reservations skip the lookup
	shards   [handoffShards]handoffShard
}

const handoffShards = 16

type handoffShard struct {
	mu   sync.Mutex
	keys recentKeys
}

// ownPace is this process's own pace of one domain, over Redis and the
// fallback together.
type ownPace struct {
	latest   time.Time     // the latest start granted to this process, local clock
	tokens   float64       // its own bucket right after latest
	planned  time.Time     // the latest start the fallback granted, as granted
	lag      time.Duration // how late the latest of the fallback's starts to go went
	seeded   bool          // the fallback has been seeded with latest
	fellBack bool          // the fallback granted a start since Redis last paced the domain alone
	expires  time.Time     // from then on the entry constrains nothing
}

func newHandoff() *handoff {
	return &handoff{seed: maphash.MakeSeed()}
}

// Each new domain looks at the look least recently used entries of its
// shard and drops those that constrain nothing.
const look = 2

func (h *handoff) shard(key string) *handoffShard {
	return &h.shards[maphash.String(h.seed, key)%handoffShards]
}

// recovery is how long after a start rule stops constraining the next:
// an empty bucket refilled, then min delay and jitter, at most horizon.
func recovery(rule *limiter.Rule) time.Duration {
	d := rule.MinDelay + rule.Jitter
	if rule.Rate > 0 {
		d += time.Duration(min(float64(rule.Burst)/rule.Rate*1e9, float64(horizon)))
	}
	if d < 0 || d > horizon { // overflowed, or absurd
		return horizon
	}
	return d
}

// note counts a start at, granted to this process under rule, into its
// own pace of key; fellBack says the fallback granted it.
func (h *handoff) note(key string, rule *limiter.Rule, at time.Time, fellBack bool) {
	sh := h.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h.noteLocked(sh, key, rule, at, fellBack)
}

// started says that a start of key counted by note at planned, under
// rule, goes at at, which may be later: the latest start moves there, its
// token taken then, so that the bucket refills from then. One that goes
// after the entry stopped constraining anything is counted anew. fellBack
// says the fallback granted it.
func (h *handoff) started(key string, rule *limiter.Rule, planned, at time.Time, fellBack bool) {
	sh := h.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	found := sh.keys.get(key)
	if found == nil || at.After(found.value.expires) {
		h.noteLocked(sh, key, rule, at, fellBack)
		return
	}
	e := &found.value
	if fellBack {
		e.lag = max(at.Sub(planned), 0)
	}
	if !at.After(e.latest) {
		return
	}
	e.latest = at
	if fellBack && !e.fellBack {
		h.fellBack.Add(1)
		e.fellBack = true
	}
	if !fellBack {
		e.seeded = false // the fallback does not know of the move
	}
	if until := at.Add(recovery(rule)); until.After(e.expires) {
		e.expires = until
	}
}

// noteLocked is note with sh, key's shard, locked.
func (h *handoff) noteLocked(sh *handoffShard, key string, rule *limiter.Rule, at time.Time, fellBack bool) {
	found := sh.keys.get(key)
	fresh := found == nil || h.dropIfIdle(&found.value, at) // an idle entry is as good as none
	if found == nil {
		sh.keys.trim(look, func(old *ownPace) bool {
			return h.dropIfIdle(old, at)
		})
		found = sh.keys.add(strings.Clone(key))
	}
	e := &found.value
	burst := float64(rule.Burst)
	switch {
	case fresh:
		e.tokens, e.latest = burst, at
	case at.After(e.latest):
		e.tokens = min(burst, e.tokens+at.Sub(e.latest).Seconds()*rule.Rate)
		e.latest = at
	}
	e.tokens--
	if fellBack && at.After(e.planned) {
		e.planned = at
	}
	if fellBack && !e.fellBack {
		h.fellBack.Add(1)
	}
	e.fellBack = e.fellBack || fellBack
	e.seeded = fellBack // the fallback knows its own starts, not Redis's
	if until := e.latest.Add(recovery(rule)); until.After(e.expires) {
		e.expires = until
	}
}

// dropIfIdle reports whether e constrains nothing at now, and then
// empties it, uncounting it from the entries that fell back.
func (h *handoff) dropIfIdle(e *ownPace, now time.Time) bool {
	if !now.After(e.expires) {
		return false
	}
	if e.fellBack {
		h.fellBack.Add(-1)
	}
	*e = ownPace{}
	return true
}

// seedFallback makes the fallback m pace key from the latest start Redis
// granted this process, once per switch to the fallback, at now: a turn
// reserved there at that start, with a bucket that holds what this
// process's own holds after it, rounded down. This goes through
// limiter.Memory's public API, a dummy reservation at the start, under
// the rule with its burst cut so that the bucket is left with those
// tokens. Never given back nor confirmed, it stays in m as its latest
// turn, with the side effects of one: it counts in m's quota windows (as
// the request Redis granted does); when nothing in m holds it back, m
// records a request sent at that start; when m's gaps hold it back, it
// goes later, so the next turn waits longer than it needs; and, made at a
// time that may lie ahead, it may make m drop keys that are quiet as of
// that time. A start inside a pause m knows of is not seeded: the pause
// holds the turns after it, and the turn itself moves after the pause
// when it is confirmed. The shard's lock is held meanwhile, so that no
// reservation of key reaches the fallback before the seed.
func (h *handoff) seedFallback(m *limiter.Memory, key string, rule *limiter.Rule, now time.Time) {
	sh := h.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	found := sh.keys.get(key)
	if found == nil || found.value.seeded || now.After(found.value.expires) {
		return
	}
	e := &found.value
	e.seeded = true
	seed := *rule
	seed.Jitter = 0 // drawn afresh, it could move the seed off the start
	if seed.Rate > 0 {
		seed.Burst = int(math.Floor(max(0, min(e.tokens, float64(rule.Burst)-1)))) + 1
	}
	req := limiter.Request{Key: key, Rule: &seed}
	if m.StateAt(req, e.latest).Paused > 0 {
		return
	}
	m.ReserveAt(req, e.latest)
}

// notBefore returns how long from now a start through Redis must wait
// for this process's own pace of key, after the fallback granted it
// starts; 0 when nothing holds it back, which ends the wait for key.
func (h *handoff) notBefore(key string, rule *limiter.Rule, now time.Time) time.Duration {
	if h.fellBack.Load() == 0 {
		return 0
	}
	sh := h.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	found := sh.keys.get(key)
	if found == nil || !found.value.fellBack {
		return 0
	}
	e := &found.value
	latest := e.latest
	if p := e.planned.Add(e.lag); p.After(latest) {
		latest = p // the fallback's latest turn, as late as the latest start that went
	}
	next := latest.Add(rule.MinDelay)
	if rule.Rate > 0 && e.tokens < 1 {
		if refill := latest.Add(time.Duration(min((1-e.tokens)/rule.Rate*1e9, float64(horizon)))); refill.After(next) {
			next = refill
		}
	}
	if d := next.Sub(now); d > 0 {
		return d
	}
	e.fellBack = false
	h.fellBack.Add(-1)
	return 0
}
