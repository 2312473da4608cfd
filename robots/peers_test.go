package robots_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/robots"
)

// Cases from the test suites of other robots.txt parsers, each named by its
// source, and real files that polite once read wrongly. Where a parser's
// suite expects something else, the case says so and why.

// redditHead is the head of reddit.com's robots.txt, as texting_robots
// keeps it in testdata/reddit.robots.txt.
const redditHead = `# 80legs
User-agent: 008
Disallow: /

# 80legs' new crawler
User-agent: voltron
Disallow: /

User-Agent: bender
Disallow: /my_shiny_metal_ass

User-agent: MJ12bot
Disallow: /

User-Agent: *
Disallow: /*.json
Disallow: /*.xml
Allow: /r/*.rss
Disallow: /login
`

// ipwatchdogHead is the head of ipwatchdog.com's robots.txt, as
// texting_robots keeps it in testdata/ipwatchdog.robots.txt.
const ipwatchdogHead = `Crawl-delay: 120

User-agent: ia_archiver
Disallow: /

User-agent: *

Disallow: /wp-admin/
`

func TestPeerAgents(t *testing.T) {
	const figtree = "User-agent: figtree\nCrawl-delay: 3\nRequest-rate: 9/30\nDisallow: /tmp\nDisallow: /a%3cd.html\n"
	const googlebotMobile = "User-agent: Googlebot\nDisallow: /\n\nUser-agent: Googlebot-Mobile\nAllow: /\n"
	const krugle = "User-agent: *\rDisallow: /maintenance.html\rDisallow: /examples/\rCrawl-delay: 3\r\r" +
		"User-agent: googlebot\rCrawl-delay: 1\r\rUser-agent: qihoobot\rDisallow: /"
	const crawlerOrder = "User-agent: crawlerbot\nDisallow: /foo/bar\n\nUser-agent: crawler\nAllow: /foo/bar\n"
	const butterfly = "User-agent: Mozilla/5.0 (compatible; Butterfly/1.0; +http://labs.topsy.com/butterfly/) Gecko/2009032608 Firefox/3.0.8\nDisallow: /\n"
	tests := []struct {
		source, robots, agent, uri string
		want                       bool
	}{
		{"issue: reddit's 008", redditHead, "008", "/r/rust/", false},
		{"issue: reddit's MJ12bot", redditHead, "MJ12bot", "/r/rust/", false},
		{"issue: reddit's MJ12bot, any case", redditHead, "mj12BOT", "/", false},
		{"issue: User-agent: MJ12bot", "User-agent: MJ12bot\nDisallow: /\n", "MJ12bot", "/x", false},
		// RFC 9309's reading cannot name MJ12bot: "*" applies in it.
		{"issue: the token reading disallows MJ12bot", "User-agent: *\nDisallow: /\n\nUser-agent: MJ12bot\nAllow: /\n", "MJ12bot", "/x", false},
		{"issue: MJ12bot is not MJ99bot", "User-agent: MJ99bot\nDisallow: /\n", "MJ12bot", "/x", true},
		{"issue: MJ12bot is not MJ", "User-agent: MJ\nDisallow: /\n\nUser-agent: MJ12bot\nAllow: /x\n", "MJ12bot", "/y", true},
		// RFC 9309's reading takes FooBot2 for FooBot.
		{"issue: the token reading disallows FooBot", "User-agent: FooBot2\nDisallow: /\n", "FooBot", "/x", false},
		{"issue: the token reading disallows FooBot, by any case", "User-agent: FOOBOT2\nDisallow: /\n", "foobot", "/x", false},
		{"issue: the whole-name reading disallows", "User-agent: *\nAllow: /\n\nUser-agent: 008\nDisallow: /\n", "008", "/x", false},
		{"texting_robots test_real_robot_against_reddit: 008", redditHead, "008", "https://www.reddit.com/r/rust/", false},
		{"texting_robots test_real_robot_against_reddit: BobBot", redditHead, "BobBot", "https://www.reddit.com/r/rust/", true},
		{"texting_robots test_real_robot_against_reddit: rss", redditHead, "BobBot", "https://www.reddit.com/r/rust/.rss", true},
		{"texting_robots test_real_robot_against_reddit: json", redditHead, "BobBot", "https://www.reddit.com/r/rust/.json", false},
		{"texting_robots test_real_robot_against_reddit: login", redditHead, "BobBot", "https://www.reddit.com/login", false},
		{"texting_robots test_robot_all_user_agents", "User-agent: *\nUser-agent: BobBot\nUser-AGENT: SmerBot", "SmerBot", "/index.html", true},
		{"ipwatchdog.com: ia_archiver", ipwatchdogHead, "ia_archiver", "/", false},
		{"ipwatchdog.com: others", ipwatchdogHead, "BobBot", "/", true},
		{"ipwatchdog.com: others, wp-admin", ipwatchdogHead, "BobBot", "/wp-admin/", false},
		// The agent "FigTree Robot libwww-perl/5.04", as WithRobots reads it.
		{"CPython DifferentAgentTest", figtree, "FigTree", "/tmp", false},
		{"CPython DifferentAgentTest: escapes", figtree, "FigTree", "/a%3Cd.html", false},
		{"CPython DifferentAgentTest: allowed", figtree, "FigTree", "/foo.html", true},
		{"CPython CrawlDelayAndRequestRateTest", figtree, "figtree", "/tmp.html", false},
		{"CPython UserAgentOrderingTest: Googlebot", googlebotMobile, "Googlebot", "/something.jpg", false},
		// CPython matches "googlebot" as a substring of "googlebot-mobile"
		// and disallows; RFC 9309 matches tokens whole.
		{"CPython UserAgentGoogleMobileTest (differs: whole tokens)", googlebotMobile, "Googlebot-Mobile", "/something.jpg", true},
		{"CPython GoogleURLOrderingTest", "User-agent: Googlebot\nAllow: /folder1/myfile.html\nDisallow: /folder1/\n", "googlebot", "/folder1/myfile.html", true},
		{"CPython GoogleURLOrderingTest: disallowed", "User-agent: Googlebot\nAllow: /folder1/myfile.html\nDisallow: /folder1/\n", "googlebot", "/folder1/anotherfile.html", false},
		{"CPython CrawlDelayAndCustomAgentTest", "User-agent: *\nCrawl-delay: 1\nDisallow: /cyberworld/map/\n\nUser-agent: cybermapper\nDisallow:\n", "cybermapper", "/cyberworld/map/index.html", true},
		{"CPython DisallowQueryStringTest", "User-agent: *\nDisallow: /some/path?name=value\n", "bot", "/some/path?name=value", false},
		{"CPython DisallowQueryStringTest: no query", "User-agent: *\nDisallow: /some/path?name=value\n", "bot", "/some/path", true},
		// CPython obeys the first "*" group; RFC 9309 merges them.
		{"CPython UseFirstUserAgentWildcardTest (differs: groups merge)", "User-agent: *\nDisallow: /some/path\n\nUser-agent: *\nDisallow: /another/path\n", "bot", "/another/path", false},
		{"crawler-commons testAgentNotListed", "User-agent: crawler1\r\nDisallow: /index.html\r\nAllow: /\r\n\r\nUser-agent: crawler2\r\nDisallow: /", "crawler3", "/index.html", true},
		// The agent "Download Ninja", as WithRobots reads it.
		{"crawler-commons testMultiWordAgentName", "User-agent: Download Ninja\r\nDisallow: /index.html\r\nAllow: /", "Download", "/index.html", false},
		{"crawler-commons testMultiWordAgentName: allowed", "User-agent: Download Ninja\r\nDisallow: /index.html\r\nAllow: /", "Download", "/anypage.html", true},
		{"crawler-commons testAgentTokenMatch: foo/1.2", "User-agent: foo/1.2\r\nDisallow: /index.html\r\nAllow: /", "foo", "/index.html", false},
		{"crawler-commons testAgentTokenMatch: foo bar", "User-agent: foo bar\r\nDisallow: /index.html\r\nAllow: /", "foo", "/index.html", false},
		{"crawler-commons testBrokenKrugleRobotsTxtFile: googlebot", krugle, "googlebot", "/", false},
		{"crawler-commons testBrokenKrugleRobotsTxtFile: anybot", krugle, "anybot", "/", true},
		{"crawler-commons testBrokenKrugleRobotsTxtFile: anybot, examples", krugle, "anybot", "/examples/index.html", false},
		{"crawler-commons testMatchingOfUserAgentNamesIndependentFromSequentialOrder", crawlerOrder, "crawlerbot", "/foo/bar", false},
		{"crawler-commons testMatchingOfUserAgentNamesIndependentFromSequentialOrder: crawler", crawlerOrder, "crawler", "/foo/bar", true},
		{"crawler-commons testMatchingUserAgentNamesHttpHeader", butterfly, "butterfly", "/", true},
		{"crawler-commons testSpacesInMultipleUserAgentNames", "User-agent: One, Two, Three\r\nDisallow: /\r\n\r\nUser-agent: *\r\nAllow: /\r\n", "One", "/fish", false},
		{"rep-cpp test_repcpp_accepts_full_url (texting_robots)", "User-Agent: agent\nDisallow: /path;params?query", "Agent", "http://userinfo@exmaple.com:10/path;params?query#fragment", false},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			assert.Equal(t, tt.want, robots.Parse([]byte(tt.robots)).Allowed(tt.agent, tt.uri))
		})
	}
}

func TestPeerCrawlDelays(t *testing.T) {
	const textingRobots = "User-Agent: A\nCrawl-Delay: 42\n# A B and the other Agent ...\nUser-Agent: B\nUser-Agent: C\nCrawl-Delay: 420\n" +
		"User-Agent: D\nCrawl-Delay: -1.25\nUser-Agent: E\nCrawl-Delay: 8\nUser-Agent: *\nCRAWL-Delay : 3600\nUser-Agent: Zero\nCrawl-Delay: 0"
	const bixo = "User-agent: bixo\rCrawl-delay: 10\rUser-agent: foobot\rCrawl-delay: 20\rUser-agent: *\rDisallow:/baz\r"
	const krugle = "User-agent: *\rDisallow: /maintenance.html\rCrawl-delay: 3\r\r" +
		"User-agent: googlebot\rCrawl-delay: 1\r\rUser-agent: qihoobot\rDisallow: /"
	const selectGroup = "User-Agent: bingbot\r\nCrawl-delay: 1\r\n\r\nUser-Agent: msnbot\r\nCrawl-delay: 2\r\n\r\n" +
		"User-Agent: pinterestbot\r\nCrawl-delay: 0.2\r\n\r\nUser-agent: *\r\nDisallow: /login\r\n"
	const merging = "User-agent: mybot\nCrawl-delay: 10\nUser-agent: yourbot\nDisallow: /private/\n\n" +
		"User-agent: *\nAllow: /\n\nUser-agent: yourbot\nDisallow: /login/\n\nUser-agent: *\nCrawl-delay: 30\n"
	const startsWith = "Crawl-Delay: 42\nUser-Agent: *\nDisallow: /blah\nUser-Agent: SpecialFriend\nAllow: /\nCrawl-Delay: 1"
	const none = time.Duration(-1)
	tests := []struct {
		source, robots, agent string
		want                  time.Duration // none for no Crawl-delay
	}{
		{"issue: per User-agent line", "User-agent: one\nCrawl-delay: 1\n\nUser-agent: two\nCrawl-delay: 2\n", "two", 2 * time.Second},
		{"issue: per User-agent line, the first", "User-agent: one\nCrawl-delay: 1\n\nUser-agent: two\nCrawl-delay: 2\n", "one", time.Second},
		{"issue: ipwatchdog.com, before any User-agent line", ipwatchdogHead, "BobBot", 120 * time.Second},
		{"issue: ipwatchdog.com, ia_archiver too", ipwatchdogHead, "ia_archiver", 120 * time.Second},
		{"issue: the longer of the two readings, by token", "User-agent: *\nCrawl-delay: 5\n\nUser-agent: MJ12bot\nCrawl-delay: 1\n", "MJ12bot", 5 * time.Second},
		{"issue: the longer of the two readings, by whole name", "User-agent: *\nCrawl-delay: 1\n\nUser-agent: MJ12bot\nCrawl-delay: 5\n", "MJ12bot", 5 * time.Second},
		{"issue: the longer of the two readings, FooBot2", "User-agent: FooBot2\nCrawl-delay: 5\n", "FooBot", 5 * time.Second},
		{"issue: MJ12bot is not MJ", "User-agent: MJ\nCrawl-delay: 5\n\nUser-agent: MJ12bot\nCrawl-delay: 1\n", "MJ12bot", time.Second},
		{"texting_robots test_robot_retrieve_crawl_delay: A", textingRobots, "A", 42 * time.Second},
		{"texting_robots test_robot_retrieve_crawl_delay: B", textingRobots, "B", 420 * time.Second},
		{"texting_robots test_robot_retrieve_crawl_delay: C", textingRobots, "C", 420 * time.Second},
		{"texting_robots test_robot_retrieve_crawl_delay: D falls through to E's", textingRobots, "D", 8 * time.Second},
		{"texting_robots test_robot_retrieve_crawl_delay: *", textingRobots, "other", 3600 * time.Second},
		{"texting_robots test_robot_retrieve_crawl_delay: Zero", textingRobots, "Zero", 0},
		{"texting_robots test_robot_crawl_delay_not_integer", "User-Agent: A\nCrawl-Delay:1.0\nUser-Agent: B\nCrawl-Delay:4.2\nUser-Agent: C\nCrawl-Delay: \x41\xc2\xc3\xb1\x42", "B", 4200 * time.Millisecond},
		{"texting_robots test_robot_crawl_delay_not_integer: C", "User-Agent: A\nCrawl-Delay:1.0\nUser-Agent: B\nCrawl-Delay:4.2\nUser-Agent: C\nCrawl-Delay: \x41\xc2\xc3\xb1\x42", "C", none},
		{"texting_robots test_robot_starts_with_crawl_delay", startsWith, "BobBot", 42 * time.Second},
		// texting_robots gives SpecialFriend its own 1 s; the Crawl-delay
		// for every crawler is the longer here, the stricter reading.
		{"texting_robots test_robot_starts_with_crawl_delay (differs: the longer)", startsWith, "SpecialFriend", 42 * time.Second},
		{"texting_robots test_real_robot_against_hn_robots", "User-Agent: *\nDisallow: /x?\nDisallow: /threads?\nCrawl-delay: 30", "BobBot", 30 * time.Second},
		{"rep-cpp test_repcpp_no_leading_user_agent (texting_robots)", "Disallow: /path\nAllow: /path/exception\nCrawl-delay: 5.2", "Agent", 5200 * time.Millisecond},
		{"rep-cpp test_repcpp_malformed_crawl_delay (texting_robots)", "User-agent: *\nCrawl-delay: word", "Agent", none},
		{"CPython CrawlDelayAndRequestRateTest", "User-agent: figtree\nCrawl-delay: 3\nRequest-rate: 9/30\nDisallow: /tmp\n", "figtree", 3 * time.Second},
		{"CPython DifferentAgentTest", "User-agent: figtree\nCrawl-delay: 3\nRequest-rate: 9/30\nDisallow: /tmp\n", "FigTree", 3 * time.Second},
		{"CPython DefaultEntryTest", "User-agent: *\nCrawl-delay: 1\nRequest-rate: 3/15\nDisallow: /cyberworld/map/\n", "test_robotparser", time.Second},
		{"CPython InvalidCrawlDelayTest", "User-Agent: *\nDisallow: /.\nCrawl-delay: pears\n", "test_robotparser", none},
		{"CPython InvalidRequestRateTest", "User-agent: *\nDisallow: /tmp/\nCrawl-delay: 3\nRequest-rate: 9/banana\n", "test_robotparser", 3 * time.Second},
		{"crawler-commons testCrawlDelay: bixo", bixo, "bixo", 10 * time.Second},
		{"crawler-commons testCrawlDelay: foobot", bixo, "foobot", 20 * time.Second},
		{"crawler-commons testCrawlDelay: rule 2", "User-agent: foobot\rCrawl-delay: 20\rUser-agent: *\rDisallow:/baz\r", "bixo", none},
		{"crawler-commons testBrokenKrugleRobotsTxtFile: googlebot", krugle, "googlebot", time.Second},
		{"crawler-commons testBrokenKrugleRobotsTxtFile: googlebot/2.1", krugle, "googlebot/2.1", 3 * time.Second}, // not a token: "*"'s, where crawler-commons matches prefixes
		{"crawler-commons testBrokenKrugleRobotsTxtFile: qihoobot", krugle, "qihoobot", none},
		{"crawler-commons testBrokenKrugleRobotsTxtFile: anybot", krugle, "anybot", 3 * time.Second},
		{"crawler-commons testSelectCrawlDelayGroup: bingbot", selectGroup, "bingbot", time.Second},
		{"crawler-commons testSelectCrawlDelayGroup: msnbot", selectGroup, "msnbot", 2 * time.Second},
		{"crawler-commons testSelectCrawlDelayGroup: anybot", selectGroup, "anybot", none},
		{"crawler-commons testFloatingPointCrawlDelay", "User-agent: *\rCrawl-delay: 0.5\rDisallow:\r", "bixo", 500 * time.Millisecond},
		{"crawler-commons testCrawlDelayGroupMerging: mybot", merging, "mybot", 10 * time.Second},
		{"crawler-commons testCrawlDelayGroupMerging: yourbot", merging, "yourbot", none},
		{"crawler-commons testCrawlDelayGroupMerging: anyotherbot", merging, "anyotherbot", 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			d, ok := robots.Parse([]byte(tt.robots)).CrawlDelay(tt.agent)
			if tt.want == none {
				assert.False(t, ok, "got %v", d)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tt.want, d)
		})
	}
}

// TestPeerGroupMerging holds the rule cases of crawler-commons'
// testCrawlDelayGroupMerging and testSelectCrawlDelayGroup: a Crawl-delay
// belongs to the lines above it, but ends no group for the rules.
func TestPeerGroupMerging(t *testing.T) {
	r := robots.Parse([]byte("User-agent: mybot\nCrawl-delay: 10\nUser-agent: yourbot\nDisallow: /private/\n\n" +
		"User-agent: *\nAllow: /\n\nUser-agent: yourbot\nDisallow: /login/\n\nUser-agent: *\nCrawl-delay: 30\n"))
	assert.False(t, r.Allowed("mybot", "/private/"))
	assert.True(t, r.Allowed("mybot", "/login/"))
	assert.False(t, r.Allowed("yourbot", "/private/"))
	assert.False(t, r.Allowed("yourbot", "/login/"))
	assert.True(t, r.Allowed("anyotherbot", "/private/"))

	r = robots.Parse([]byte("User-Agent: bingbot\r\nCrawl-delay: 1\r\n\r\nUser-Agent: msnbot\r\nCrawl-delay: 2\r\n\r\n" +
		"User-agent: *\r\nDisallow: /login\r\nSitemap: http://www.example.com/sitemap.xml\r\nDisallow: /assets/"))
	for _, agent := range []string{"bingbot", "msnbot", "anybot"} {
		assert.False(t, r.Allowed(agent, "/login"), agent)
		assert.False(t, r.Allowed(agent, "/assets/"), agent)
		assert.True(t, r.Allowed(agent, "/"), agent)
	}
}
