package robots

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
)

// maxBody is how much of a robots.txt Parse reads: the 500 KiB that
// RFC 9309 section 2.5 asks every parser to accept.
const maxBody = 500 << 10

// Robots is a parsed robots.txt: the groups of rules it gives each product
// token, their Crawl-delay, and its Sitemap lines. It does not change once
// made and is safe for concurrent use. A nil *Robots, like the zero value,
// allows everything.
type Robots struct {
	text     string          // every rule's pattern, User-agent name (lower case) and Sitemap, back to back
	rules    []rule          // the rules of group g are rules[groups[g].lo:groups[g].hi]
	groups   []group         // in file order
	tokens   []member        // the User-agent lines read as RFC 9309 reads them (see userAgent)
	names    []member        // the same lines read by their whole names
	delays   []time.Duration // the Crawl-delays that apply, in file order
	delay    uint32          // delays[delay-1] is a Crawl-delay before any User-agent line, for every crawler; 0 if none
	sitemaps []string        // in text
}

// rule is one Allow or Disallow line: text[off:off+n] is its path pattern
// in compared form. The rules of a group are sorted longest first, an Allow
// before a Disallow of the same length, so that the first that matches is
// the one RFC 9309 says applies.
type rule struct {
	off, n uint32
	lit    uint32 // the length of the pattern's literal prefix, before any '*' or final '$'
	allow  bool
	need   uint64 // byteSet of the octets after the prefix, which a matching path must hold
}

// newRule returns the rule for the pattern pat, at off in the text.
func newRule(off int, pat []byte, allow bool) rule {
	x := rule{off: uint32(off), n: uint32(len(pat)), allow: allow}
	lit := bytes.IndexByte(pat, '*')
	if lit < 0 {
		lit = len(bytes.TrimSuffix(pat, []byte("$")))
	} else {
		x.need = byteSet(bytes.TrimSuffix(pat[lit:], []byte("$")))
	}
	x.lit = uint32(lit)
	return x
}

// group is one group of the file: one or more User-agent lines and the
// rules that follow them.
type group struct{ lo, hi uint32 }

// span is where a Sitemap value is in the parser's buffer.
type span struct{ off, n uint32 }

// member says that the name text[off:off+n] ("*" for the catch-all) names
// group, and that delays[delay-1] is its Crawl-delay (none if delay is 0).
// The members of a list are sorted by the length of the name, the name,
// then group.
type member struct {
	off, n, group, delay uint32
}

// Parse parses a robots.txt body. It never fails: as RFC 9309 section 2.3.1.5
// asks, every line that can be parsed is used and the others are skipped.
// It reads at most the first 500 KiB of body (the limit of RFC 9309 section
// 2.5); a longer body is cut after its last complete line in that limit. The
// result keeps no reference to body and holds at most about four bytes per
// byte of body read.
//
// A line is a key, a colon (or a full-width one, U+FF1A) and a value, with
// a '#' starting a comment
// anywhere; lines end with CR, LF or CRLF, and a UTF-8 byte order mark at
// the start is skipped. White space around keys, values and User-agent
// names is not part of them: space and tab, as RFC 9309 says, and the
// Unicode spaces (such as U+00A0 no-break space, U+2002 en space, U+3000)
// and Latin-1 no-break space (a lone 0xA0 octet) that real files carry.
// Keys are read without regard to case, with the misspellings Google's
// parser accepts ("useragent", "user agent", "dissallow", "dissalow",
// "disalow", "diasllow", "disallaw", and "crawldelay", "crawl delay"), and
// as it does, any one-word key that starts with "sitemap" or "site-map"
// ("Sitemaps") is a Sitemap line. A missing colon is forgiven when the line
// holds exactly two words ("disallow /", "Sitemap https://a.b/s.xml").
// Other keys are ignored.
//
// Only Allow and Disallow lines end the User-agent lines of a group:
// Sitemap and Crawl-delay, like unknown lines, are "other records" that
// RFC 9309 section 2.2.4 forbids to end a group (so in "User-agent: a",
// "Crawl-delay: 1", "User-agent: b", "Disallow: /x", a and b share the
// group and its rule). A Crawl-delay, though, belongs to the User-agent
// lines just above it: those of its group since the group's previous
// Crawl-delay (in that file, a gets 1 second and b none), as CPython's,
// crawler-commons' and reppy's parsers read it. A Crawl-delay before the
// first User-agent line applies to every crawler. Crawl-delay lines whose
// value cannot be read are skipped.
func Parse(body []byte) *Robots {
	if len(body) > maxBody {
		body = body[:maxBody]
		body = body[:bytes.LastIndexAny(body, "\r\n")+1]
	}
	for _, c := range []byte("\xEF\xBB\xBF") { // a BOM, or what starts one
		if len(body) == 0 || body[0] != c {
			break
		}
		body = body[1:]
	}
	var p parser
	for len(body) > 0 {
		line := body
		body = nil
		if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
			line, body = line[:i], line[i+1:]
		}
		p.line(line)
	}
	return p.finish()
}

// parser builds a Robots line by line. Until finish, the offsets in rules,
// tokens and names point into buf.
type parser struct {
	buf      []byte
	rules    []rule
	groups   []group
	tokens   []member
	names    []member
	delays   []time.Duration
	delay    uint32 // Robots.delay
	sitemaps []span
	inAgents bool // the last group line was a User-agent: another one joins its group
	// The members from tokens[undelayed[0]:] and names[undelayed[1]:] are
	// those of the current group above no Crawl-delay yet.
	undelayed [2]int
}

type key int

const (
	unknownKey key = iota
	userAgentKey
	allowKey
	disallowKey
	crawlDelayKey
	sitemapKey
)

// keyOf returns what the key of a line stands for.
func keyOf(k []byte) key {
	if (hasPrefixFold(k, "sitemap") || hasPrefixFold(k, "site-map")) && indexSpace(k) < 0 {
		return sitemapKey // "Sitemaps", "Sitemap_index": as Google's parser reads them
	}
	var b [16]byte
	if len(k) > len(b) {
		return unknownKey
	}
	for i, c := range k {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch string(b[:len(k)]) {
	case "user-agent", "useragent", "user agent":
		return userAgentKey
	case "allow":
		return allowKey
	case "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw":
		return disallowKey
	case "crawl-delay", "crawldelay", "crawl delay":
		return crawlDelayKey
	}
	return unknownKey
}

// hasPrefixFold reports whether k starts with prefix, a lower-case ASCII
// word, without regard to case.
func hasPrefixFold(k []byte, prefix string) bool {
	if len(k) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := k[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// line parses one line of the file.
func (p *parser) line(l []byte) {
	if i := bytes.IndexByte(l, '#'); i >= 0 {
		l = l[:i]
	}
	l = trim(l)
	k, v := splitColon(l)
	key := keyOf(k)
	if key == unknownKey {
		// No colon, or one inside the value ("Sitemap https://a.b/"):
		// a line of two words is read as a key and a value.
		if k2, v2, ok := splitWords(l); ok {
			key, v = keyOf(k2), v2
		}
	}
	switch key {
	case userAgentKey:
		p.userAgent(v)
	case allowKey:
		p.rule(v, true)
	case disallowKey:
		p.rule(v, false)
	case crawlDelayKey:
		if d, ok := parseDelay(v); ok {
			p.crawlDelay(d)
		}
	case sitemapKey:
		if len(v) > 0 {
			p.sitemaps = append(p.sitemaps, span{uint32(len(p.buf)), uint32(len(v))})
			p.buf = append(p.buf, v...)
		}
	}
}

// splitColon splits a trimmed line at its first colon into a key and a
// value, without the white space around them; both are nil if the line
// has no colon. A full-width colon (U+FF1A, "Disallow：/x"), as files
// typed with an East Asian input method carry, counts as one.
func splitColon(l []byte) (k, v []byte) {
	i, n := bytes.IndexByte(l, ':'), 1
	if j := bytes.Index(l, []byte(fullWidthColon)); j >= 0 && (i < 0 || j < i) {
		i, n = j, len(fullWidthColon)
	}
	if i < 0 {
		return nil, nil
	}
	return trimRight(l[:i]), trimLeft(l[i+n:])
}

// fullWidthColon is U+FF1A in UTF-8.
const fullWidthColon = "\uFF1A"

// splitWords splits a trimmed line of exactly two words into them: the
// key and value of a line whose colon is missing ("disallow /").
func splitWords(l []byte) (k, v []byte, ok bool) {
	i := indexSpace(l)
	if i < 0 {
		return nil, nil, false
	}
	k, v = l[:i], trimLeft(l[i:])
	if indexSpace(v) >= 0 {
		return nil, nil, false // more than two words: not a line we can read
	}
	return k, v, true
}

// userAgent reads the value of a User-agent line: "*" (or "*" and more
// words) names every crawler without a group of its own. Otherwise the
// line is read two ways. As RFC 9309 reads it, the product token is the
// leading run of letters, '-' and '_' (so "FooBot/1.2" and "FooBot Images"
// name FooBot, and "MJ12bot" MJ), and a value with none names no crawler.
// By its whole name, the crawler is the value up to the first '/' or space
// ("MJ12bot", "008").
func (p *parser) userAgent(v []byte) {
	if !p.inAgents || len(p.groups) == 0 {
		n := uint32(len(p.rules))
		p.groups = append(p.groups, group{lo: n, hi: n})
		p.inAgents = true
		p.undelayed = [2]int{len(p.tokens), len(p.names)}
	}
	g := uint32(len(p.groups) - 1)
	if len(v) > 0 && v[0] == '*' && (len(v) == 1 || leadingSpace(v[1:]) > 0) {
		v = v[:1]
		p.tokens = p.member(p.tokens, v, g)
		p.names = p.member(p.names, v, g)
		return
	}
	p.tokens = p.member(p.tokens, v[:productToken(v)], g)
	p.names = p.member(p.names, v[:wholeName(v)], g)
}

// member appends to list, and returns, the member for the name v of group
// g, in lower case; an empty v names no crawler.
func (p *parser) member(list []member, v []byte, g uint32) []member {
	if len(v) == 0 {
		return list
	}
	off := len(p.buf)
	for _, c := range v {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		p.buf = append(p.buf, c)
	}
	return append(list, member{off: uint32(off), n: uint32(len(v)), group: g})
}

// crawlDelay gives d to the members above it in their group that have no
// Crawl-delay yet, or to every crawler before the first group.
func (p *parser) crawlDelay(d time.Duration) {
	switch {
	case len(p.groups) == 0:
		if p.delay == 0 {
			p.delays = append(p.delays, d)
			p.delay = uint32(len(p.delays))
		}
		return
	case p.undelayed == [2]int{len(p.tokens), len(p.names)}:
		return // no User-agent line since the group's last Crawl-delay
	}
	p.delays = append(p.delays, d)
	for _, ms := range [][]member{p.tokens[p.undelayed[0]:], p.names[p.undelayed[1]:]} {
		for i := range ms {
			ms[i].delay = uint32(len(p.delays))
		}
	}
	p.undelayed = [2]int{len(p.tokens), len(p.names)}
}

// productToken returns the length of the product token at the start of s,
// as RFC 9309 section 2.2.1 reads it: its leading run of letters, '-' and
// '_'.
func productToken(s []byte) int {
	n := 0
	for n < len(s) && isTokenChar(s[n]) {
		n++
	}
	return n
}

// wholeName returns the length of the name at the start of s: up to its
// first '/' or white space.
func wholeName(s []byte) int {
	n := bytes.IndexByte(s, '/')
	if n < 0 {
		n = len(s)
	}
	if i := indexSpace(s[:n]); i >= 0 {
		n = i
	}
	return n
}

// isTokenChar reports whether c may be part of a product token (RFC 9309
// section 2.2.1: letters, '-' and '_').
func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
}

// rule reads an Allow or Disallow line. Outside any group it is ignored; an
// empty value matches nothing but still ends the group's User-agent lines.
func (p *parser) rule(v []byte, allow bool) {
	if len(p.groups) == 0 {
		return
	}
	p.inAgents = false
	if len(v) == 0 {
		return
	}
	off := len(p.buf)
	p.buf = appendNormal(p.buf, v, true)
	p.rules = append(p.rules, newRule(off, p.buf[off:], allow))
	p.groups[len(p.groups)-1].hi = uint32(len(p.rules))
}

// parseDelay reads a Crawl-delay value: a non-negative decimal number of
// seconds ("10", "0.5", "1e3"). A value too large for a time.Duration is
// the largest one.
func parseDelay(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if !('0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, false // also keeps out "inf", "nan" and hex floats
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || !(f >= 0) {
		return 0, false
	}
	if d := f * float64(time.Second); d < math.MaxInt64 {
		return time.Duration(d), true
	}
	return math.MaxInt64, true
}

// finish sorts each group's rules, drops duplicate rules and product
// tokens, and copies what is kept into a Robots of exact size.
func (p *parser) finish() *Robots {
	r := &Robots{
		rules:  make([]rule, 0, len(p.rules)),
		groups: slices.Clone(p.groups),
	}
	text := make([]byte, 0, len(p.buf))
	pat := func(x rule) []byte { return p.buf[x.off : x.off+x.n] }
	for g := range r.groups {
		grp := &r.groups[g]
		rs := p.rules[grp.lo:grp.hi]
		slices.SortFunc(rs, func(a, b rule) int {
			if c := cmp.Compare(b.n, a.n); c != 0 {
				return c
			}
			if c := bytes.Compare(pat(a), pat(b)); c != 0 {
				return c
			}
			switch {
			case a.allow == b.allow:
				return 0
			case a.allow:
				return -1 // Allow first
			}
			return 1
		})
		grp.lo = uint32(len(r.rules))
		for i, x := range rs {
			if i > 0 && bytes.Equal(pat(x), pat(rs[i-1])) {
				continue // the same pattern: the first, an Allow if any, decides
			}
			x.off = uint32(len(text))
			r.rules = append(r.rules, x)
			text = append(text, pat(rs[i])...)
		}
		grp.hi = uint32(len(r.rules))
	}
	r.rules = slices.Clip(r.rules) // duplicates dropped: at most a few unused entries

	r.tokens, text = p.finishMembers(p.tokens, text)
	r.names, text = p.finishMembers(p.names, text)
	r.delays, r.delay = slices.Clip(p.delays), p.delay
	for _, sm := range p.sitemaps {
		text = append(text, p.buf[sm.off:sm.off+sm.n]...)
	}
	r.text = string(text)
	if len(p.sitemaps) > 0 {
		r.sitemaps = make([]string, len(p.sitemaps))
		end := len(r.text)
		for i := len(p.sitemaps) - 1; i >= 0; i-- {
			n := int(p.sitemaps[i].n)
			r.sitemaps[i] = r.text[end-n : end]
			end -= n
		}
	}
	return r
}

// finishMembers sorts ms, merges the members that name the same group by
// the same name (keeping the first Crawl-delay in file order), and copies
// the names to the end of text, which it returns with the members kept.
func (p *parser) finishMembers(ms []member, text []byte) ([]member, []byte) {
	name := func(m member) []byte { return p.buf[m.off : m.off+m.n] }
	slices.SortStableFunc(ms, func(a, b member) int {
		if c := cmp.Compare(a.n, b.n); c != 0 {
			return c
		}
		if c := bytes.Compare(name(a), name(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.group, b.group)
	})
	kept := make([]member, 0, len(ms))
	for i, m := range ms {
		if i == 0 || !bytes.Equal(name(m), name(ms[i-1])) {
			kept = append(kept, member{off: uint32(len(text)), n: m.n, group: m.group, delay: m.delay})
			text = append(text, name(m)...)
			continue
		}
		last := &kept[len(kept)-1]
		switch {
		case last.group != m.group:
			kept = append(kept, member{off: last.off, n: last.n, group: m.group, delay: m.delay})
		case last.delay == 0:
			last.delay = m.delay
		}
	}
	return slices.Clip(kept), text
}

// lookup returns the members of list whose name is name, read without
// regard to case, or if there are none those whose name is "*".
func (r *Robots) lookup(list []member, name string) []member {
	if ms := r.find(list, name); len(ms) > 0 {
		return ms
	}
	return r.find(list, "*")
}

// find returns the members of list whose name is name, read as if in lower
// case. It does not allocate.
func (r *Robots) find(list []member, name string) []member {
	lo, hi := 0, len(list)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.compare(list[m], name) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	hi = lo
	for hi < len(list) && r.compare(list[hi], name) == 0 {
		hi++
	}
	return list[lo:hi]
}

// compare compares the name of m with name, read as if in lower case, in
// the order of a list of members: by length first, so that most compare no
// octet.
func (r *Robots) compare(m member, name string) int {
	if int(m.n) != len(name) {
		return cmp.Compare(int(m.n), len(name))
	}
	t := r.text[m.off : m.off+m.n]
	for i := 0; i < len(t); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if t[i] != c {
			return cmp.Compare(t[i], c)
		}
	}
	return 0
}

// readings returns the members that apply to agent in each reading of the
// file: by product token, as RFC 9309 reads the User-agent lines, and by
// whole name, each falling back to the members of "*". They are the same
// members (the same groups) unless agent or a line holds characters other
// than letters, '-' and '_'.
func (r *Robots) readings(agent string) (tokens, names []member) {
	return r.lookup(r.tokens, agent), r.lookup(r.names, agent)
}

// sameGroups reports whether a and b, members of one name each, name the
// same groups.
func sameGroups(a, b []member) bool {
	return slices.EqualFunc(a, b, func(x, y member) bool { return x.group == y.group })
}

// Allowed reports whether the crawler whose product token is agent may
// fetch uri. The file is read two ways, and uri is allowed only if both
// allow it. As RFC 9309 (and Google's parser) reads it, agent is matched
// whole and without regard to case against the product token of each
// User-agent line: its leading run of letters, '-' and '_'. By whole
// name, agent is matched so against the name of each line, up to its
// first '/' or space. So "008" obeys the group of "User-agent: 008" (which
// names no crawler as RFC 9309 reads it), and "MJ12bot" obeys both the
// group of "User-agent: MJ12bot" and the group that applies to it in the
// RFC's reading, which cannot name it: the group of "*". In each reading,
// if no line names agent, the group of "*" applies, and if there is none
// either, every URI is allowed. For an agent of letters, '-' and '_' alone,
// the two readings differ only on lines such as "User-agent: MJ12bot",
// which the RFC's reading takes for MJ.
//
// uri is the request target an HTTP client sends ("/a/b?c=d"), or a whole
// URL ("https://example.com/a/b?c=d"), of which the path and query are used
// (a URL without a scheme, "example.com/a", is read as host and path). A
// fragment is ignored. Before matching, uri is put in the form the rules
// are kept in (percent-encoding as RFC 9309 section 2.2.2 says, see the
// package doc) and the dot segments of its path are removed, so that
// "/a/../b" is matched as "/b". "/robots.txt" is always allowed.
//
// Allowed does not allocate for a uri that is already in that form: one
// with no '%', '*', '$', octet outside printable ASCII or dot segment, as
// most URIs net/http sends are.
func (r *Robots) Allowed(agent, uri string) bool {
	allow, _ := r.allowed(agent, uri, nil)
	return allow
}

// Match reports what Allowed reports, and the path pattern of the rule
// that decided it, in the form the rules are kept in: "/private" for
// "Disallow: /private". The pattern is "" when no rule matches uri, which
// is then allowed.
func (r *Robots) Match(agent, uri string) (allowed bool, pattern string) {
	return r.allowed(agent, uri, nil)
}

// allowed is Match; if steps is not nil, it is increased by the work done
// in matching (see match).
func (r *Robots) allowed(agent, uri string, steps *int) (bool, string) {
	path, set := requestPath(uri)
	if r == nil || path == "/robots.txt" {
		return true, ""
	}
	tokens, names := r.readings(agent)
	allow, pattern := r.allowedBy(tokens, path, set, steps)
	if allow && !sameGroups(tokens, names) {
		if byName, namePattern := r.allowedBy(names, path, set, steps); !byName {
			return false, namePattern
		}
	}
	return allow, pattern
}

// allowedBy reports whether the groups of members allow path, whose
// byteSet is set, and the pattern of the rule that decides it ("" if
// none does).
func (r *Robots) allowedBy(members []member, path string, set uint64, steps *int) (bool, string) {
	best, allow, decided := -1, true, ""
	for _, m := range members {
		g := r.groups[m.group]
		rules := r.rules[g.lo:g.hi]
		for i := range rules {
			x := &rules[i]
			if int(x.n) < best || int(x.n) == best && (allow || !x.allow) {
				break // the rules left cannot beat the match already found
			}
			if steps != nil {
				*steps++
			}
			lit := int(x.lit)
			if x.need&^set != 0 || lit > len(path) {
				continue // the path lacks an octet the rule needs, or is too short
			}
			pat := r.text[x.off : x.off+x.n]
			if lit > 0 && path[lit-1] != pat[lit-1] || path[:lit] != pat[:lit] {
				continue // the last octet of the prefix is the quickest to tell
			}
			if match(pat, path, steps) {
				best, allow, decided = int(x.n), x.allow, pat
				break // the rules after it are shorter, or Disallows as long
			}
		}
	}
	return allow, decided
}

// CrawlDelay returns the Crawl-delay that the file asks of agent, and
// whether it asks for one: the longest of the one its groups give it in
// each reading (chosen as Allowed chooses them) and of one before the first
// User-agent line, which applies to every crawler. A Crawl-delay belongs to
// the User-agent lines just above it (see Parse); if the lines that name
// agent in one reading give more than one, the first in the file counts.
// The value is in seconds, with a fraction if any ("0.5"); one too large
// for a time.Duration gives the largest, and a negative or malformed one
// is ignored.
func (r *Robots) CrawlDelay(agent string) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	tokens, names := r.readings(agent)
	d := max(r.delayAt(r.delay), r.delayAt(firstDelay(tokens)), r.delayAt(firstDelay(names)))
	return max(d, 0), d >= 0
}

// firstDelay returns the first Crawl-delay in the file that one of members
// has, as an index into delays plus one; 0 if none has one.
func firstDelay(members []member) uint32 {
	first := uint32(0)
	for _, m := range members {
		if m.delay != 0 && (first == 0 || m.delay < first) {
			first = m.delay
		}
	}
	return first
}

// delayAt returns delays[i-1], or -1 if i is 0.
func (r *Robots) delayAt(i uint32) time.Duration {
	if i == 0 {
		return -1
	}
	return r.delays[i-1]
}

// Sitemaps returns the values of the file's Sitemap lines, in file order,
// wherever they stand in it (within the 500 KiB that Parse reads).
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.sitemaps)
}
