package otelpolite_test

import (
	"log"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/otelpolite"
)

// Each request's span (otelhttp's) holds polite's: the wait for its turn,
// a pause its response asked for, a refusal, the robots.txt fetch it
// caused. RegisterMetrics reports the Transport's stats, as the
// Prometheus collector does. The spans and metrics go to the global
// providers, which the program sets up with its exporter.
func Example() {
	t, err := polite.NewTransport(nil, polite.WithRobots("ExampleBot"), otelpolite.WithTracing())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := otelpolite.RegisterMetrics(t, otelpolite.WithMaxDomains(100)); err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: otelhttp.NewTransport(t)}
	_ = client // client.Get("https://example.com/") …
}
