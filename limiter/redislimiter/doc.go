// Package redislimiter shares polite's pace between processes through
// Redis; concurrency caps (max_concurrent) stay per process.
//
// Shared are the token bucket (rate, burst), min_delay, jitter, quotas
// (exact sliding windows) and pauses, so that one worker's 429 pauses every
// worker for that domain. Each call runs one Lua script that decides every
// rule of the domain atomically on Redis's own clock (TIME), so that the
// workers' clocks never matter. A request costs one round trip: Reserve
// holds the earliest start and returns how long to wait for it, and the
// caller sleeps; there is no polling. With a *redis.Client, calls made at
// once share round trips: while as many calls are under way as the
// Limiter takes of the client's pool (half its connections), the calls
// that come meanwhile wait for the first to be answered and then go
// together in one pipeline; a lone call goes at once. (On a Cluster each
// call goes alone, so that a failed node holds no call to another.) Where
// Redis has functions (7.0 and later), the scripts are loaded once as a
// library and called by name (FCALL); elsewhere, and for a Redis user
// without the right to load functions, they run by their hash (EVALSHA).
// A request that had to wait pays one more when its turn comes (the
// departure gate, limiter.Wait's Confirm), to tell Redis that it leaves
// and to find out whether a worker paused the domain meanwhile; if one did,
// its turn is given back and the first one after the pause held. A
// request whose turn came at once pays one more only if it leaves more
// than 2 ms after the reply: Redis noted its departure when it granted the
// turn, and the confirm script then takes that back and notes it when it
// really leaves.
// A cancelled wait gives its turn back, as limiter.Memory does: every
// cancelled turn that no later live turn follows. A domain's keys (prefix
// + "{domain}:state"; prefix + "{domain}:starts", the history of starts
// that every quota counts; and prefix + "{domain}:last", the record of its
// latest start) share a hash tag, so the scripts run on Redis Cluster.
//
// What a server says is observed in each process, in a limiter.Memory of
// its own: the backoff after repeated 429s, the adaptive gap and a
// robots.txt's Crawl-delay are per process, not shared; a process widens
// the gaps of the turns it holds by what it observed. The pauses a server
// asks for (Retry-After, RateLimit headers, backoff) are shared: each one
// is written to Redis as well, where it holds every worker.
//
// Concurrency caps (max_concurrent) are not shared: the Transport enforces
// them in each process, since a shared count would leak the slots of a
// worker that dies mid-request.
//
// # Guarantees
//
// Redis never grants two starts of one domain closer than its rules allow,
// on Redis's clock, whichever processes ask, while it keeps the domain's
// keys. A turn given back does not break that: a turn given back that is
// not the latest frees its quota slots but not its token, so that it is
// never reused sooner than the rules allow (later requests may wait a
// token longer than they need). Nor does a reset of Redis make a turn
// given back count twice: each domain's state has an epoch, so a
// reservation made before a reset cannot be given back into the state made
// after it.
//
// What a reset loses: a domain's latest start is kept twice, in its state
// and in a key of its own (prefix + "{domain}:last"), so that Redis
// losing one of the two (a key evicted under maxmemory-policy allkeys-lru,
// or deleted) keeps the gap from it: a reservation for a domain without a
// state counts the start its record holds. Only a rule with a gap to keep
// (a min delay, jitter, or a burst of 1) writes the record: under a bucket
// of more tokens a lost state starts full, and one start counted into it
// would hold no request back. Losing both (FLUSHALL, a
// restart without persistence, or allkeys-lru evicting both, as it does
// under enough pressure: in a test that evicted half the domains' states,
// about a quarter to a third of the domains lost both keys) loses what the
// workers share: each process still keeps the gap from its own latest
// request to the domain (the request's LastStart, which a Transport
// passes), but another process may then start at once, and the quota
// windows start afresh. Give Redis room (or maxmemory-policy
// volatile-lru with other data that expires, or noeviction, which makes a
// full Redis an outage that the failure mode covers) where that matters.
//
// A request goes when its wait, counted from the reply, is over: late by
// the reply's trip back, and by its timer firing late on a busy machine
// (by hundreds of milliseconds under load). So Redis also keeps a record,
// as limiter.Memory does: when the latest request started, as its Confirm
// (or its reservation, when it went at once) told Redis, on Redis's clock.
// A start later than planned by more than a millisecond moves the turns
// held after it, and a turn granted before it, to any process, waits at
// its Confirm until the rules allow after it: Confirm returns the extra
// wait, and the caller (limiter.Wait) sleeps and confirms again. That
// costs no round trip more for a start on time, and one more for each turn
// a late start holds back.
//
// What remains: the server can see two requests of one domain closer than
// the rules allow by up to a millisecond (a start that late counts as on
// time, and the record holds a turn back only for more), plus the time
// from Redis answering the Confirm to the request leaving (the reply's
// trip back and a goroutine scheduled late after it, which Redis does not
// know of), plus the difference between the processes' network delays to
// the server. A turn given back leaves the record as it is, so a request
// recorded but not sent only holds the next ones back. Waits are capped: a
// reservation that would wait more than 400 days is refused, and every key
// gets an expiry, whatever the rule (config.Limit.Validate refuses rules
// that come near).
//
// # Outages
//
// Each call to Redis is bounded by WithTimeout (loading a script into
// a node that lacks it, once per node, is not counted). When Redis does
// not answer in time or fails (a full Redis refusing writes included),
// the Limiter logs it once and, by default, paces each domain in this
// process with the same limits and what this process observed (its
// limiter.Memory), marking its reservations Degraded, which the Transport
// counts in its stats; no request fails because Redis is down.
// WithFailOpen stops pacing instead and WithFailClosed fails requests;
// their docs say when to use which. An outage is of the node that failed:
// on a Redis Cluster (a *redis.ClusterClient), the domains of the other
// primaries keep the shared pace, provided the Cluster is set to
// cluster-require-full-coverage no (by default it refuses every slot
// until the failed primary's replica is promoted). In the background the
// Limiter has a Cluster client reload its slot map, and tries a
// reservation of its own (WithProbeInterval) in the slot that failed,
// not a PING; it returns that node's domains to the shared pace as soon as
// that works, on the promoted replica after a failover. Pauses made while
// Redis is away are carried over to it then. The recovery is logged once
// the shared pace has held for a second: an outage is one outage, one
// warning and one recovery, also when Redis takes a write and refuses the
// next, as a full one does.
//
// What an outage costs, by default: the request whose call fails waits up
// to WithTimeout's duration before it is paced here; then each process paces on
// its own, so a domain sees up to the number of processes times its pace,
// and no more, also across the switches. A process's fallback starts after
// the turns Redis granted it, which still go, not with a full bucket; and
// back on Redis, a process's first turns come no earlier than its own pace
// allows after its fallback's, each of those counted as late as the latest
// of them went. What is not carried over: the quota windows (each fallback
// counts only its own starts, from the outage on); with a burst above 1,
// the switch back waits only for this process's next token while Redis's
// bucket may hold more, so it can add up to burst-1 starts to the
// process's own pace; and a late start that Redis does not hear of (its
// Confirm failing while Redis is away) narrows the gap to a turn granted
// before it went.
//
// With a *redis.Client (one made by redis.NewFailoverClient included), the
// Limiter keeps the client's connection pool usable through an outage:
// after as many failed dials as the pool has connections, go-redis fails
// every call at once and dials again only once a second, which would hold
// the shared pace back for up to a second after Redis, or the primary a
// Sentinel promoted, answers. So the Limiter has at most half the pool's
// connections (PoolSize) in its calls at once; once its calls have waited
// 10ms with none answered, it dials Redis itself, outside the pool, and if
// that fails Redis is down at once, before the timeout, and the calls
// under way are cut short; and while Redis is down, it dials it outside
// the pool before each probe.
//
// Create the client with ContextTimeoutEnabled, so that go-redis itself
// ends a call at the timeout; with a client that does not, each call runs
// on a goroutine of its own that the Limiter can abandon, which adds some
// latency.
//
// # Memory
//
// A domain's keys expire once the domain has been idle for as long as it
// takes to recover fully (its bucket full, its min delay, pause and quota
// windows over) and as long again, at least a second, so Redis holds only
// active domains: about 380 bytes each for the state (60 more for each
// turn that waits) and 100 for the record of its latest start (MEMORY
// USAGE; only under a rule with a gap to keep), plus about 12 bytes per
// request a quota allows. Where the scripts run as functions, Redis's Lua
// memory also keeps the states of the latest 1,000 to 2,000 domains
// written, decoded (up to about 4 MB in all), so that a busy domain's next
// call need not decode its state. A reservation for a domain without keys
// counts the request's LastStart (a Transport's latest request to the
// domain) as a start, so that a rule made stricter since the keys expired,
// or since Redis lost them, keeps its gaps from it.
//
// To carry its own pace across the switches of an outage, each process
// remembers, per domain it used in the recent past, its own latest start
// and bucket, about 140 bytes plus the domain's name.
package redislimiter
