package polite

import (
	"cmp"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/limiter"
)

// realAPI is one response a real API documents, and the pause polite
// takes from it.
type realAPI struct {
	name   string
	source string   // where the API documents the response
	status int      // the response's status
	header []string // field names and values, in turn
	at     time.Time
	cap    time.Duration // WithMaxPause; 0 means 1 hour
	want   time.Duration
}

// Where each API documents its fields.
const (
	gitHubDoc     = "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api"
	redditDoc     = "https://www.reddit.com/r/redditdev/comments/1yxrp7/formal_ratelimiting_headers/"
	discordDoc    = "https://discord.com/developers/docs/topics/rate-limits"
	xDoc          = "https://docs.x.com/x-api/fundamentals/rate-limits"
	oktaDoc       = "https://developer.okta.com/docs/reference/rl-best-practices/"
	prisjaktDoc   = "https://developer.prisjakt.nu/docs/sections/rate-limit"
	shopifyDoc    = "https://shopify.dev/docs/api/admin-rest/usage/rate-limits"
	gitLabDoc     = "https://docs.gitlab.com/ee/user/gitlab_com/index.html#haproxy-api-throttle"
	gitLabIssue   = "https://gitlab.com/gitlab-org/gitlab/-/issues/199738"
	cloudflareDoc = "https://developers.cloudflare.com/fundamentals/api/reference/limits/"
	atlassianDoc  = "https://developer.atlassian.com/cloud/jira/platform/rate-limiting/"
	openAIDoc     = "https://platform.openai.com/docs/guides/rate-limits"
	openAIForum   = "https://community.openai.com/t/how-to-get-rate-limit-reset-time-for-response-api/1268905"
	ietf00        = "https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-00"
	ietf06        = "https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-06"
	ietf07        = "https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-07"
	ietf08        = "https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-08"
	ietf10        = "https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10"
	rfc9110       = "https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3"
)

func unix(sec int64, ms int64) time.Time { return time.Unix(sec, ms*int64(time.Millisecond)) }

func httpDate(s string) time.Time {
	t, err := http.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return t
}

// realAPIs are the documented responses of real APIs. Each row's at is the
// moment its reset is the wanted pause ahead, so that the documented epoch
// values are used as they are.
var realAPIs = []realAPI{
	// GitHub: primary limits answer 403 or 429 with x-ratelimit-remaining
	// 0; secondary limits answer 403 or 429, with retry-after when present.
	{"GitHub, requests left", gitHubDoc, 200, []string{"x-ratelimit-limit", "60", "x-ratelimit-remaining", "56", "x-ratelimit-reset", "1372700873"},
		httpDate("Mon, 01 Jul 2013 17:27:06 GMT"), 0, 0},
	{"GitHub primary limit, 403", gitHubDoc, 403, []string{"x-ratelimit-limit", "60", "x-ratelimit-remaining", "0", "x-ratelimit-used", "60",
		"x-ratelimit-reset", "1372700873", "x-ratelimit-resource", "core"}, httpDate("Mon, 01 Jul 2013 17:27:06 GMT"), 0, 1247 * time.Second},
	{"GitHub primary limit, 429", gitHubDoc, 429, []string{"x-ratelimit-limit", "60", "x-ratelimit-remaining", "0", "x-ratelimit-used", "60",
		"x-ratelimit-reset", "1372700873", "x-ratelimit-resource", "core"}, httpDate("Mon, 01 Jul 2013 17:27:06 GMT"), 0, 1247 * time.Second},
	{"GitHub secondary limit, 403 with retry-after", gitHubDoc, 403, []string{"retry-after", "60", "x-ratelimit-limit", "5000",
		"x-ratelimit-remaining", "4999", "x-ratelimit-reset", "1372700873"}, unix(1372700873-3000, 0), 0, time.Minute},
	{"GitHub secondary limit, 429 with retry-after", gitHubDoc, 429, []string{"retry-after", "60", "x-ratelimit-limit", "5000",
		"x-ratelimit-remaining", "4999", "x-ratelimit-reset", "1372700873"}, unix(1372700873-3000, 0), 0, time.Minute},
	{"GitHub 403 saying requests remain is not a limit", gitHubDoc, 403, []string{"x-ratelimit-limit", "5000",
		"x-ratelimit-remaining", "4999", "x-ratelimit-reset", "1372700873"}, unix(1372700873-1800, 0), 0, 0},

	// Reddit: remaining is a decimal, reset the seconds to the period's end.
	{"Reddit, none left", redditDoc, 200, []string{"X-Ratelimit-Used", "600", "X-Ratelimit-Remaining", "0.0", "X-Ratelimit-Reset", "342"},
		unix(1700000000, 0), 0, 342 * time.Second},
	{"Reddit, some left", redditDoc, 200, []string{"X-Ratelimit-Used", "2", "X-Ratelimit-Remaining", "598.0", "X-Ratelimit-Reset", "342"},
		unix(1700000000, 0), 0, 0},

	// Discord.
	{"Discord bucket empty", discordDoc, 200, []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1470173023",
		"X-RateLimit-Reset-After", "1", "X-RateLimit-Bucket", "abcd1234"}, unix(1470173022, 0), 0, time.Second},
	{"Discord bucket empty, reset already past by this clock", discordDoc, 200, []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0",
		"X-RateLimit-Reset", "1470173023", "X-RateLimit-Reset-After", "1", "X-RateLimit-Bucket", "abcd1234"}, unix(1470173024, 0), 0, time.Second},
	{"Discord user limit", discordDoc, 429, []string{"Retry-After", "65", "X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0",
		"X-RateLimit-Reset", "1470173023.123", "X-RateLimit-Reset-After", "64.57", "X-RateLimit-Bucket", "abcd1234", "X-RateLimit-Scope", "user"},
		unix(1470172958, 553), 0, 65 * time.Second},
	{"Discord shared resource limit, requests remain", discordDoc, 429, []string{"Retry-After", "1337", "X-RateLimit-Limit", "10",
		"X-RateLimit-Remaining", "9", "X-RateLimit-Reset", "1470173023.123", "X-RateLimit-Reset-After", "64.57", "X-RateLimit-Bucket", "abcd1234",
		"X-RateLimit-Scope", "shared"}, unix(1470172958, 553), 0, 1337 * time.Second},
	{"Discord global limit", discordDoc, 429, []string{"Retry-After", "65", "X-RateLimit-Global", "true", "X-RateLimit-Scope", "global"},
		unix(1470172958, 0), 0, 65 * time.Second},

	// X (Twitter): x-rate-limit-*, the reset a Unix time.
	{"X, requests left", xDoc, 200, []string{"x-rate-limit-limit", "900", "x-rate-limit-remaining", "847", "x-rate-limit-reset", "1705420800"},
		unix(1705420800-300, 0), 0, 0},
	{"X, none left", xDoc, 200, []string{"x-rate-limit-limit", "900", "x-rate-limit-remaining", "0", "x-rate-limit-reset", "1705420800"},
		unix(1705420800-300, 0), 0, 5 * time.Minute},
	{"X, 429", xDoc, 429, []string{"x-rate-limit-limit", "900", "x-rate-limit-remaining", "0", "x-rate-limit-reset", "1705420800"},
		unix(1705420800-300, 0), 0, 5 * time.Minute},

	// Okta: X-Rate-Limit-*, the reset a Unix time.
	{"Okta, requests left", oktaDoc, 200, []string{"X-Rate-Limit-Limit", "1200", "X-Rate-Limit-Remaining", "1199", "X-Rate-Limit-Reset", "1609459200"},
		unix(1609459200-60, 0), 0, 0},
	{"Okta, 429", oktaDoc, 429, []string{"X-Rate-Limit-Limit", "1200", "X-Rate-Limit-Remaining", "0", "X-Rate-Limit-Reset", "1609459200"},
		unix(1609459200-60, 0), 0, time.Minute},
	// Prisjakt gives its reset in milliseconds from now: read as seconds,
	// which is longer, and capped.
	{"Prisjakt, reset in milliseconds", prisjaktDoc, 429, []string{"X-Rate-Limit-Limit", "10000", "X-Rate-Limit-Remaining", "0",
		"X-Rate-Limit-Reset", "600000"}, unix(1700000000, 0), 10 * time.Minute, 10 * time.Minute},

	// Shopify: Retry-After with a decimal part.
	{"Shopify 429", shopifyDoc, 429, []string{"X-Shopify-Shop-Api-Call-Limit", "40/40", "Retry-After", "2.0"}, unix(1700000000, 0), 0, 2 * time.Second},
	{"Shopify, bucket not full", shopifyDoc, 200, []string{"X-Shopify-Shop-Api-Call-Limit", "32/40"}, unix(1700000000, 0), 0, 0},

	// GitLab: the older drafts' RateLimit-* with a Unix time.
	{"GitLab, requests left", gitLabDoc, 200, []string{"RateLimit-Limit", "600", "RateLimit-Observed", "6", "RateLimit-Remaining", "594",
		"RateLimit-Reset", "1563325137", "RateLimit-ResetTime", "Wed, 17 Jul 2019 00:58:57 GMT"}, unix(1563325137-60, 0), 0, 0},
	{"GitLab, none left", gitLabDoc, 200, []string{"RateLimit-Limit", "600", "RateLimit-Observed", "600", "RateLimit-Remaining", "0",
		"RateLimit-Reset", "1563325137", "RateLimit-ResetTime", "Wed, 17 Jul 2019 00:58:57 GMT"}, unix(1563325137-60, 0), 0, time.Minute},
	{"GitLab 429 saying requests remain", gitLabIssue, 429, []string{"RateLimit-Limit", "600", "RateLimit-Observed", "5",
		"RateLimit-Remaining", "595", "RateLimit-Reset", "1580393717", "RateLimit-ResetTime", "Thu, 30 Jan 2020 14:15:17 GMT"},
		httpDate("Thu, 30 Jan 2020 14:14:16 GMT"), 0, 61 * time.Second},

	// Cloudflare: the current draft's RateLimit and RateLimit-Policy.
	{"Cloudflare, requests left", cloudflareDoc, 200, []string{"Ratelimit", `"default";r=50;t=30`, "Ratelimit-Policy", `"burst";q=100;w=60`},
		unix(1700000000, 0), 0, 0},
	{"Cloudflare 429", cloudflareDoc, 429, []string{"Ratelimit", `"default";r=0;t=30`, "Ratelimit-Policy", `"burst";q=100;w=60`, "retry-after", "30"},
		unix(1700000000, 0), 0, 30 * time.Second},

	// Atlassian: X-RateLimit-Reset is an ISO 8601 time, to the minute.
	{"Atlassian 429", atlassianDoc, 429, []string{"Retry-After", "30", "X-RateLimit-Reset", "2024-08-01T12:30Z"},
		time.Date(2024, 8, 1, 12, 29, 30, 0, time.UTC), 0, 30 * time.Second},
	{"Atlassian 429 without Retry-After", atlassianDoc, 429, []string{"X-RateLimit-Reset", "2024-08-01T12:30Z"},
		time.Date(2024, 8, 1, 12, 29, 0, 0, time.UTC), 0, time.Minute},
	{"Atlassian 503 with Retry-After", atlassianDoc, 503, []string{"Retry-After", "10"}, unix(1700000000, 0), 0, 10 * time.Second},
	{"Atlassian near the limit", atlassianDoc, 200, []string{"X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "15", "X-RateLimit-NearLimit", "true"},
		unix(1700000000, 0), 0, 0},

	// OpenAI: -requests and -tokens pairs, resets as Go durations.
	{"OpenAI, requests and tokens left", openAIDoc, 200, []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-limit-tokens", "150000",
		"x-ratelimit-remaining-requests", "59", "x-ratelimit-remaining-tokens", "149984", "x-ratelimit-reset-requests", "1s",
		"x-ratelimit-reset-tokens", "6m0s"}, unix(1700000000, 0), 0, 0},
	{"OpenAI, no request left", openAIDoc, 200, []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "0",
		"x-ratelimit-remaining-tokens", "149984", "x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"}, unix(1700000000, 0), 0, time.Second},
	{"OpenAI, no token left", openAIDoc, 200, []string{"x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-requests", "59",
		"x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"}, unix(1700000000, 0), 0, 6 * time.Minute},
	{"OpenAI 429 saying both remain", openAIDoc, 429, []string{"x-ratelimit-remaining-requests", "59", "x-ratelimit-remaining-tokens", "149984",
		"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"}, unix(1700000000, 0), 0, 6 * time.Minute},
	{"OpenAI, milliseconds", openAIForum, 200, []string{"x-ratelimit-limit-requests", "5000", "x-ratelimit-remaining-requests", "0",
		"x-ratelimit-remaining-tokens", "159976", "x-ratelimit-reset-requests", "12ms", "x-ratelimit-reset-tokens", "9ms"}, unix(1700000000, 0), 0, 12 * time.Millisecond},

	// The successive IETF drafts.
	{"IETF draft 00, 429", ietf00, 429, []string{"Retry-After", "Mon, 05 Aug 2019 09:27:05 GMT", "RateLimit-Reset", "5", "RateLimit-Limit", "100",
		"Ratelimit-Remaining", "0"}, httpDate("Mon, 05 Aug 2019 09:27:00 GMT"), 0, 5 * time.Second},
	{"IETF draft 00, quota left", ietf00, 200, []string{"RateLimit-Limit", "100", "RateLimit-Remaining", "99", "RateLimit-Reset", "50"},
		unix(1700000000, 0), 0, 0},
	{"IETF draft 06, none left", ietf06, 200, []string{"RateLimit-Limit", "10", "RateLimit-Remaining", "0", "RateLimit-Reset", "50",
		"RateLimit-Policy", "10;w=60"}, unix(1700000000, 0), 0, 50 * time.Second},
	{"IETF draft 07, none left", ietf07, 200, []string{"RateLimit", "limit=10, remaining=0, reset=50", "RateLimit-Policy", "10;w=60"},
		unix(1700000000, 0), 0, 50 * time.Second},
	{"IETF draft 08, 429", ietf08, 429, []string{"Retry-After", "Mon, 05 Aug 2019 09:27:05 GMT", "RateLimit", `"default";r=0;t=5`},
		httpDate("Mon, 05 Aug 2019 09:27:00 GMT"), 0, 5 * time.Second},
	{"IETF draft 10, quota left", ietf10, 200, []string{"RateLimit-Policy", `"default";q=100;w=10`, "RateLimit", `"default";r=50;t=30`},
		unix(1700000000, 0), 0, 0},
	{"IETF draft 10, none left, window from the policy", ietf10, 200, []string{"RateLimit-Policy", `"default";q=100;w=10`, "RateLimit", `"default";r=0`},
		unix(1700000000, 0), 0, 10 * time.Second},
	{"IETF draft 10, two policies", ietf10, 429, []string{"RateLimit-Policy", `"permin";q=50;w=60,"perhr";q=1000;w=3600`,
		"RateLimit", `"permin";r=0;t=45`}, unix(1700000000, 0), 0, 45 * time.Second},

	// Retry-After in the three HTTP-date forms, and on a redirect.
	{"Retry-After IMF-fixdate", rfc9110, 503, []string{"Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"}, httpDate("Sun, 06 Nov 1994 08:48:37 GMT"), 0, time.Minute},
	{"Retry-After RFC 850 date", rfc9110, 503, []string{"Retry-After", "Sunday, 06-Nov-94 08:49:37 GMT"}, httpDate("Sun, 06 Nov 1994 08:48:37 GMT"), 0, time.Minute},
	{"Retry-After asctime date", rfc9110, 503, []string{"Retry-After", "Sun Nov  6 08:49:37 1994"}, httpDate("Sun, 06 Nov 1994 08:48:37 GMT"), 0, time.Minute},
	{"Retry-After seconds", rfc9110, 503, []string{"Retry-After", "120"}, unix(1700000000, 0), 0, 2 * time.Minute},
	{"Retry-After on a redirect", rfc9110, 301, []string{"Retry-After", "120", "Location", "/moved"}, unix(1700000000, 0), 0, 2 * time.Minute},
}

// TestRealAPIHeaders checks the pause each real API's documented response
// asks for, as the Transport reads it and the limiter takes it in.
func TestRealAPIHeaders(t *testing.T) {
	for _, api := range realAPIs {
		t.Run(api.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: api.status, Header: http.Header{}}
			for i := 0; i < len(api.header); i += 2 {
				resp.Header.Add(api.header[i], api.header[i+1])
			}
			rule := limiter.Rule{MinDelay: time.Millisecond, MaxPause: cmp.Or(api.cap, time.Hour)}
			r := limiter.Request{Key: "api.example", Rule: &rule}
			m := limiter.NewMemory()
			var got time.Duration
			if speaks(resp) {
				got = m.ObserveAt(r, observation(resp, api.at, api.at), api.at)
			}
			assert.Equal(t, api.want, got, "source: %s", api.source)
			if api.want > 0 {
				assert.Equal(t, api.want, m.StateAt(r, api.at).Wait, "the next request waits the pause")
			}
		})
	}
}

// FuzzObservation feeds any header values a server could send, on any
// status, to what the Transport reads: it never panics, never asks for a
// negative wait, and what it asks for the limiter caps.
func FuzzObservation(f *testing.F) {
	for _, api := range realAPIs {
		for i := 1; i < len(api.header); i += 2 {
			f.Add(api.status, api.header[i], api.header[i])
		}
	}
	f.Add(429, "\x00", "9999999999999999999999")
	f.Fuzz(func(t *testing.T, status int, a, b string) {
		at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		h := http.Header{}
		for _, name := range []string{"Retry-After", "Ratelimit", "Ratelimit-Policy", "Ratelimit-Remaining", "Ratelimit-Reset",
			"X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Reset-After", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset",
			"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"} {
			h[name] = []string{a, b}
		}
		resp := &http.Response{StatusCode: status, Header: h}
		o := observation(resp, at, at)
		if o.RetryAfter < 0 || o.RateLimit < 0 {
			t.Fatalf("a negative wait: %+v", o)
		}
		rule := limiter.Rule{MinDelay: time.Second, MaxPause: time.Minute}
		r := limiter.Request{Key: "fuzz.example", Rule: &rule}
		m := limiter.NewMemory()
		if added := m.ObserveAt(r, o, at); added < 0 || added > time.Minute {
			t.Fatalf("a pause of %v beyond the cap", added)
		}
		if wait := m.StateAt(r, at).Wait; wait > time.Minute {
			t.Fatalf("a wait of %v beyond the cap", wait)
		}
	})
}
