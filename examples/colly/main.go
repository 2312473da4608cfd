package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

func main() {
	rate := flag.Float64("rate", 1, "requests per second per domain")
	burst := flag.Int("burst", 1, "burst per domain")
	proxy := flag.String("proxy", "", "proxy URL, set on the base transport under polite")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: colly-polite [-rate R] [-burst B] [-proxy URL] START-URL")
		os.Exit(2)
	}
	start, err := url.Parse(flag.Arg(0))
	if err != nil || start.Hostname() == "" {
		fmt.Fprintf(os.Stderr, "colly-polite: bad start URL %q\n", flag.Arg(0))
		os.Exit(2)
	}

	base := http.DefaultTransport.(*http.Transport).Clone()
	if *proxy != "" {
		p, err := url.Parse(*proxy)
		if err != nil {
			fmt.Fprintf(os.Stderr, "colly-polite: bad proxy URL: %v\n", err)
			os.Exit(2)
		}
		base.Proxy = http.ProxyURL(p) // not c.SetProxy: it would drop polite
	}
	t, err := newTransport(base, polite.WithDefault(config.Limit{RequestsPerSecond: *rate, Burst: *burst}))
	if err != nil {
		fmt.Fprintf(os.Stderr, "colly-polite: %v\n", err)
		os.Exit(2)
	}
	c := newCollector(t, start.Hostname())
	c.OnResponse(func(r *colly.Response) {
		fmt.Printf("%s %d %s\n", time.Now().Format("15:04:05.000"), r.StatusCode, r.Request.URL)
	})
	c.OnError(func(r *colly.Response, err error) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", r.Request.URL, err)
	})
	if err := c.Visit(start.String()); err != nil {
		fmt.Fprintf(os.Stderr, "colly-polite: %v\n", err)
		os.Exit(1)
	}
	c.Wait()

	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(t.AllStats())
}
