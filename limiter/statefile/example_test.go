package statefile_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/statefile"
)

// Two runs of a program: the second keeps the turn the first one took.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "polite")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state")
	rule := limiter.Rule{Rate: 0.01, Burst: 1} // a request every 100 s

	for run := 1; run <= 2; run++ {
		f, err := statefile.Open(path)
		if err != nil {
			log.Fatal(err) // limiter.ErrStateInUse, limiter.ErrStateDamaged, or a file it could not make
		}
		m := limiter.NewMemory()
		if err := m.Persist(f); err != nil {
			log.Fatal(err)
		}
		res, err := m.Reserve(context.Background(), limiter.Request{Key: "example.com", Rule: &rule})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("run %d: example.com waits %v\n", run, res.Wait().Round(10*time.Second))
		if err := m.Close(); err != nil { // commits the state one last time
			log.Fatal(err)
		}
	}
	// Output:
	// run 1: example.com waits 0s
	// run 2: example.com waits 1m40s
}
