package redislimiter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// workerEnv, set to "1", makes the test binary a worker process: it runs
// workerMain instead of the tests. workerConfigEnv holds its workerConfig.
const (
	workerEnv       = "POLITE_WORKER"
	workerConfigEnv = "POLITE_WORKER_CONFIG"
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain())
	}
	os.Exit(m.Run())
}

// workerConfig tells a worker process what to do.
type workerConfig struct {
	ID         string        `json:"id"`
	Redis      string        `json:"redis"`
	URL        string        `json:"url"`
	Run        time.Duration `json:"run"`
	Rate       float64       `json:"rate"`
	Burst      int           `json:"burst"`
	Goroutines int           `json:"goroutines"`
	Timeout    time.Duration `json:"timeout"` // WithTimeout; 0: the default
}

// workerReport is a worker's last line on stdout.
type workerReport struct {
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	Degraded int64 `json:"degraded"`
}

// workerMain is a crawler worker: it sends requests to the URL for a while
// through a polite Transport paced by a Limiter on the shared Redis. The
// Limiter logs as JSON on stdout; the report follows.
func workerMain() int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(os.Getenv(workerConfigEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	client := redis.NewClient(&redis.Options{Addr: cfg.Redis})
	defer client.Close()
	l, err := New(client, WithLogger(slog.New(slog.NewJSONHandler(os.Stdout, nil))), WithTimeout(cfg.Timeout))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer l.Close()
	tr, err := polite.NewTransport(nil, polite.WithLimiter(l), polite.WithDefault(config.Limit{RequestsPerSecond: cfg.Rate, Burst: cfg.Burst}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	var failed atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(cfg.Run)
	for range cfg.Goroutines {
		wg.Go(func() {
			for time.Now().Before(stop) {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, cfg.URL, nil)
				req.Header.Set("X-Worker", cfg.ID)
				resp, err := hc.Do(req)
				if err != nil {
					failed.Add(1)
					fmt.Fprintln(os.Stderr, "worker:", err)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	var rep workerReport
	for _, s := range tr.AllStats() {
		rep.Requests += s.TotalRequests
		rep.Degraded += s.DegradedRequests
	}
	rep.Errors = failed.Load()
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 2
	}
	return 0
}
