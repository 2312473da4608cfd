// Package robots parses robots.txt files and answers whether a crawler may fetch a URI, as RFC 9309 says.
//
// [Parse] reads a file once, leniently and without failing; the [Robots]
// it returns answers [Robots.Allowed], [Robots.CrawlDelay] and
// [Robots.Sitemaps] for any product token, without allocating for the
// usual request URI. The package uses the standard library only.
//
// # What is followed
//
// Everything RFC 9309 asks of a crawler's parser and matcher:
//
//   - Groups (section 2.1): a group is one or more User-agent lines and the
//     rules after them; rules before the first User-agent line are ignored;
//     lines other than User-agent, Allow and Disallow (Sitemap, Crawl-delay,
//     unknown ones) end no group; the last group may have no rules, and then
//     allows everything to the crawlers it names.
//   - Product tokens (section 2.2.1): a crawler's token is matched whole and
//     without regard to case against the token of each User-agent line (its
//     leading run of letters, '-' and '_', so "FooBot/1.2" names FooBot);
//     the groups that name the same token are merged; the "*" group applies
//     only to crawlers that no group names.
//   - Rules (section 2.2.2): matched from the first octet of the path; the
//     longest matching rule, counted in the octets of the rule as written
//     (with its '*' and '$'), decides; an Allow wins over a Disallow as long;
//     an empty rule matches nothing; with no matching rule, or no group, the
//     URI is allowed; "/robots.txt" is always allowed.
//   - Percent-encoding (section 2.2.2): rules and URIs are compared in one
//     form, in which octets outside ASCII are percent-encoded, escaped
//     unreserved characters ("%7E", "%62") are decoded, other escapes have
//     upper-case hex digits, and a '%' that starts no escape stands for
//     itself. In a query, the escapes of ':', '/', '?' and '@' are decoded
//     too, so that "?u=https://a.b" and "?u=https%3A%2F%2Fa.b" match as the
//     section's table says.
//   - Special characters (section 2.2.3): '#' starts a comment anywhere in a
//     line; '*' in a rule matches any run of octets and a final '$' the end
//     of the URI; "%2A" and "%24" in a rule match a literal '*' and '$' in a
//     URI, as does a '$' that is not the last octet of a rule.
//   - Other records (section 2.2.4): Sitemap lines anywhere in the file, and
//     Crawl-delay lines, which end no group.
//   - Limits (section 2.5): at least 500 KiB of a file is parsed.
//   - Lines end with CR, LF or CRLF, and a UTF-8 byte order mark is skipped.
//   - White space (section 2.2): space and tab around keys, values and
//     User-agent names are not part of them.
//
// Beyond the RFC, so that a crawler never fetches what a reasonable reading
// of a file disallows, as real files are written:
//
//   - Whole names: the file is also read with each User-agent line naming
//     the crawler up to its first '/' or space ("MJ12bot", "008", which
//     the RFC's reading takes for MJ and for no crawler), and a URI is
//     allowed only if both readings allow it. The Crawl-delay is the
//     longer of the two readings'.
//   - White space as a reader sees it: the Unicode spaces (U+00A0 no-break
//     space, U+2000 to U+200A, U+3000 and the others) and a Latin-1
//     no-break space (a lone 0xA0 octet) around a key, a value or a
//     User-agent name are trimmed like space and tab, so that
//     "Disallow: /lib" followed by a no-break space disallows "/library",
//     and "User-agent: *" followed by one applies to every crawler. A
//     full-width colon (U+FF1A) after a key is read as its colon.
//   - Crawl-delay belongs to the User-agent lines just above it in its
//     group, as CPython's, crawler-commons' and reppy's parsers read it:
//     in "User-agent: one", "Crawl-delay: 1", "User-agent: two",
//     "Crawl-delay: 2", two gets 2 seconds. A Crawl-delay before the first
//     User-agent line applies to every crawler, and the longer wins where
//     its group gives another.
//
// And for safety against hostile files and URIs: the dot segments of a
// URI's path ("/a/../b", "/a/%2e%2e/b") are removed before matching, as RFC
// 3986 section 5.2.4 makes them the same URI; a rule is matched left to
// right with no backtracking, in time linear in the lengths of the rule and
// the URI whatever its '*'s, so that a check costs at worst the number of
// rules in the group times the URI's length; a parsed file holds at most
// about four bytes per byte of the file.
//
// # Differences from Google's parser
//
// The package is tested against every case of Google's robots_test.cc
// (github.com/google/robotstxt) that asks whether a URL is allowed, and
// against cases of CPython's, crawler-commons', texting_robots' and
// rep-cpp's suites (where one of those expects otherwise, the test says
// why). It answers differently from Google, on purpose, in 6 of its 145
// cases, and as Google does in the other 139:
//
//   - ID_Encoding (3 of its 7 cases): Google leaves the URL as its caller gives it, so that the
//     rule "/foo/bar/ツ" does not match the URL "/foo/bar/ツ", and the rule
//     "/foo/bar/%62%61%7A" does not match "/foo/bar/baz". Here the URI is put
//     in the same form as the rules, as RFC 9309 section 2.2.2 asks ("%62%61%7A"
//     is "baz", and its own table says so): both match.
//   - GoogleOnly_IndexHTMLisDirectory (1 of 4): Google reads "Allow: /dir/index.html"
//     as also allowing "/dir/". RFC 9309 has no such rule, and a crawler
//     should not fetch what a file does not allow: here it allows only what
//     it says.
//   - GoogleOnly_LineTooLong (2 of 5): Google cuts lines after 16,664 octets, so that
//     a long rule stands for its first part and matches URIs the whole rule
//     does not (a cut Allow allows what the site did not). RFC 9309 sets no
//     line limit: here a line is read whole, within the 500 KiB of the file.
//
// Beyond its tests, Google's parser also reads any key that starts with a
// known one ("disallowed", "user-agents") as that key, where here only the
// keys themselves and the listed misspellings count (and, as there, any
// key that starts with "sitemap" or "site-map"); it trims only ASCII white
// space; it does not remove dot segments, nor decode escapes in a query; it
// does not read lines by whole name; and it ignores Crawl-delay.
package robots
