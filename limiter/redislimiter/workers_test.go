package redislimiter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// arrival is a request the shared test server received.
type arrival struct {
	at     time.Time
	worker string
}

// recorder is the site every worker crawls: it notes each arrival.
type recorder struct {
	mu       sync.Mutex
	arrivals []arrival
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.arrivals = append(r.arrivals, arrival{time.Now(), req.Header.Get("X-Worker")})
	r.mu.Unlock()
}

// between returns the arrival times in [from, to), of worker if not empty.
func (r *recorder) between(from, to time.Time, worker string) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Time
	for _, a := range r.arrivals {
		if !a.at.Before(from) && a.at.Before(to) && (worker == "" || a.worker == worker) {
			out = append(out, a.at)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

func (r *recorder) workers() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, a := range r.arrivals {
		seen[a.worker] = true
	}
	return seen
}

// excess is how far sorted arrivals go beyond a token bucket (rate, burst)
// in their worst window: max over i <= j of (j-i+1) - (burst + rate*span).
func excess(arrivals []time.Time, rate float64, burst int) float64 {
	worst := 0.0
	for i := range arrivals {
		for j := i; j < len(arrivals); j++ {
			allowed := float64(burst) + rate*arrivals[j].Sub(arrivals[i]).Seconds()
			worst = max(worst, float64(j-i+1)-allowed)
		}
	}
	return worst
}

// workerProc is a worker process: this test binary run as workerMain.
type workerProc struct {
	id             string
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

func startWorker(t *testing.T, cfg workerConfig) *workerProc {
	t.Helper()
	data, err := json.Marshal(cfg)
	require.NoError(t, err)
	w := &workerProc{id: cfg.ID, done: make(chan error, 1)}
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), workerEnv+"=1", workerConfigEnv+"="+string(data))
	w.cmd.Stdout, w.cmd.Stderr = &w.stdout, &w.stderr
	require.NoError(t, w.cmd.Start())
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() { _ = w.cmd.Process.Kill() })
	return w
}

// workerLog is one line of a worker's stdout: a log record or the report.
type workerLog struct {
	Time time.Time `json:"time"`
	Msg  string    `json:"msg"`
	workerReport
}

// wait waits for the worker to end well and returns its log and report.
func (w *workerProc) wait(t *testing.T) ([]workerLog, workerReport) {
	t.Helper()
	select {
	case err := <-w.done:
		require.NoError(t, err, "worker %s failed: %s", w.id, w.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("worker %s did not end", w.id)
	}
	var logs []workerLog
	sc := bufio.NewScanner(&w.stdout)
	for sc.Scan() {
		var line workerLog
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), "worker %s: %s", w.id, sc.Text())
		logs = append(logs, line)
	}
	require.NotEmpty(t, logs, "worker %s wrote nothing", w.id)
	rep := logs[len(logs)-1].workerReport
	assert.Zero(t, rep.Errors, "worker %s: no request fails: %s", w.id, w.stderr.String())
	assert.Positive(t, rep.Requests, "worker %s", w.id)
	return logs[:len(logs)-1], rep
}

// messages returns the log lines that are msg.
func messages(logs []workerLog, msg string) []workerLog {
	var out []workerLog
	for _, l := range logs {
		if l.Msg == msg {
			out = append(out, l)
		}
	}
	return out
}

const (
	downMsg = "redislimiter: redis unavailable, pacing in this process until it answers"
	upMsg   = "redislimiter: redis answers again, sharing the pace"
)

// slack is how many arrivals beyond the bucket's bound the checks accept:
// a start is decided on Redis's clock, but reaches the server after a
// delay that varies on a loaded machine.
const slack = 3

// workerTimeout is the workers' WithTimeout: longer than the default, so
// that on a loaded machine only the outage the test makes is one (a dead
// Redis refuses connections at once; a slow one is TestSlowRedisCountsAsDown's).
const workerTimeout = 500 * time.Millisecond

func TestWorkersShareOnePace(t *testing.T) {
	srv := redistest.Start(t)
	site := &recorder{}
	ts := httptest.NewServer(site)
	defer ts.Close()
	const (
		workers = 4
		rate    = 20.0
		burst   = 5
	)
	var procs []*workerProc
	for i := range workers {
		procs = append(procs, startWorker(t, workerConfig{ID: strconv.Itoa(i), Redis: srv.Addr(), URL: ts.URL,
			Run: 3 * time.Second, Rate: rate, Burst: burst, Goroutines: 2, Timeout: workerTimeout}))
	}
	for _, p := range procs {
		logs, rep := p.wait(t)
		assert.Zero(t, rep.Degraded, "worker %s", p.id)
		assert.Empty(t, messages(logs, downMsg), "worker %s", p.id)
	}
	arrivals := site.between(time.Time{}, time.Now(), "")
	require.NotEmpty(t, arrivals)
	span := arrivals[len(arrivals)-1].Sub(arrivals[0])
	bound := burst + rate*span.Seconds()
	t.Logf("%d workers: %d arrivals in %v; one shared bucket allows %.0f", workers, len(arrivals), span, bound)
	assert.Len(t, site.workers(), workers, "every worker sent requests")
	assert.LessOrEqual(t, excess(arrivals, rate, burst), float64(slack), "arrivals stay within burst + rate × elapsed in every window")
	assert.GreaterOrEqual(t, float64(len(arrivals)), 0.8*bound, "the workers use the shared pace")
}

func TestWorkersSurviveRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	site := &recorder{}
	ts := httptest.NewServer(site)
	defer ts.Close()
	const (
		workers = 3
		rate    = 20.0
		burst   = 2
	)
	var procs []*workerProc
	for i := range workers {
		procs = append(procs, startWorker(t, workerConfig{ID: strconv.Itoa(i), Redis: srv.Addr(), URL: ts.URL,
			Run: 9 * time.Second, Rate: rate, Burst: burst, Goroutines: 2, Timeout: workerTimeout}))
	}
	require.Eventually(t, func() bool { return len(site.workers()) == workers }, 10*time.Second, 10*time.Millisecond, "workers start")
	started := time.Now()
	time.Sleep(1500 * time.Millisecond)
	killedAt := time.Now()
	srv.Kill()
	time.Sleep(2500 * time.Millisecond)
	restartedAt := time.Now()
	srv.Restart()

	var lastUp time.Time
	for _, p := range procs {
		logs, rep := p.wait(t)
		assert.Positive(t, rep.Degraded, "worker %s counted degraded requests", p.id)
		down, up := messages(logs, downMsg), messages(logs, upMsg)
		require.Len(t, down, 1, "worker %s logs the outage once", p.id)
		require.Len(t, up, 1, "worker %s logs the recovery once", p.id)
		assert.True(t, up[0].Time.After(restartedAt), "worker %s", p.id)
		// The probe (every 100ms) finds Redis within a few intervals of
		// its start, which a loaded machine slows: a generous bound.
		assert.Less(t, up[0].Time.Sub(restartedAt), 3*time.Second, "worker %s shares the pace again soon after Redis answers", p.id)
		if up[0].Time.After(lastUp) {
			lastUp = up[0].Time
		}
	}
	end := time.Now()

	before := site.between(started, killedAt, "")
	assert.LessOrEqual(t, excess(before, rate, burst), float64(slack), "shared pace before the outage")
	from := killedAt.Add(workerTimeout + 300*time.Millisecond) // each worker has found Redis down
	for _, p := range procs {
		own := site.between(from, restartedAt, p.id)
		assert.GreaterOrEqual(t, float64(len(own)), 0.5*rate*restartedAt.Sub(from).Seconds(), "worker %s keeps going at its own pace while Redis is down", p.id)
	}
	after := site.between(lastUp.Add(300*time.Millisecond), end, "")
	require.NotEmpty(t, after)
	t.Logf("before the outage %d arrivals, during %d, after recovery %d in %v",
		len(before), len(site.between(from, restartedAt, "")), len(after), after[len(after)-1].Sub(after[0]))
	assert.LessOrEqual(t, excess(after, rate, burst), float64(slack), "shared pace again after recovery")
	assert.GreaterOrEqual(t, float64(len(after)), 0.8*rate*after[len(after)-1].Sub(after[0]).Seconds(), "the workers use the shared pace after recovery")
}
