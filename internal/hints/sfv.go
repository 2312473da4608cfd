package hints

import "strings"

// This file parses just enough of HTTP Structured Field Values (RFC 9651)
// for the RateLimit fields: Lists of Items and Dictionaries, each member
// with Parameters. Inner lists are a parse error. As RFC 9651 requires, a
// field that fails to parse is ignored as a whole.

// sfValue is a bare item. Numbers (Integer and Decimal) are kept as
// float64; a Boolean's value is not kept, as no field here uses one.
type sfValue struct {
	kind sfKind
	num  float64
	str  string // String, Token, Byte Sequence (still base64)
}

type sfKind uint8

const (
	sfNumber sfKind = iota + 1
	sfString
	sfToken
	sfBytes
	sfBool
)

type sfParam struct {
	key   string
	value sfValue
}

// sfMember is a List member, or a Dictionary member when key is set.
type sfMember struct {
	key    string
	value  sfValue
	params []sfParam
}

// param returns the parameter key of m.
func (m sfMember) param(key string) (sfValue, bool) {
	for _, p := range m.params {
		if p.key == key {
			return p.value, true
		}
	}
	return sfValue{}, false
}

type sfParser struct {
	s string
	i int
}

// parseSFList parses a List of Items; ok is false if s is not one.
func parseSFList(s string) ([]sfMember, bool) {
	return parseSF(s, false)
}

// parseSFDict parses a Dictionary; ok is false if s is not one.
func parseSFDict(s string) ([]sfMember, bool) {
	return parseSF(s, true)
}

func parseSF(s string, dict bool) ([]sfMember, bool) {
	p := &sfParser{s: strings.Trim(s, " \t")}
	var out []sfMember
	for p.i < len(p.s) {
		var m sfMember
		if dict {
			key, ok := p.key()
			if !ok {
				return nil, false
			}
			m.key = key
			if p.peek() == '=' {
				p.i++
				if m.value, ok = p.bareItem(); !ok {
					return nil, false
				}
			} else {
				m.value = sfValue{kind: sfBool}
			}
		} else {
			var ok bool
			if m.value, ok = p.bareItem(); !ok {
				return nil, false
			}
		}
		params, ok := p.params()
		if !ok {
			return nil, false
		}
		m.params = params
		out = append(out, m)
		p.skipOWS()
		if p.i == len(p.s) {
			return out, true
		}
		if p.s[p.i] != ',' {
			return nil, false
		}
		p.i++
		p.skipOWS()
		if p.i == len(p.s) {
			return nil, false // a trailing comma
		}
	}
	return out, len(out) > 0
}

func (p *sfParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sfParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *sfParser) params() ([]sfParam, bool) {
	var out []sfParam
	for p.peek() == ';' {
		p.i++
		for p.peek() == ' ' {
			p.i++
		}
		key, ok := p.key()
		if !ok {
			return nil, false
		}
		v := sfValue{kind: sfBool}
		if p.peek() == '=' {
			p.i++
			if v, ok = p.bareItem(); !ok {
				return nil, false
			}
		}
		out = append(out, sfParam{key, v})
	}
	return out, true
}

func (p *sfParser) key() (string, bool) {
	start := p.i
	if c := p.peek(); !(c >= 'a' && c <= 'z') && c != '*' {
		return "", false
	}
	for p.i++; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
	}
	return p.s[start:p.i], true
}

func (p *sfParser) bareItem() (sfValue, bool) {
	switch c := p.peek(); {
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '"':
		return p.str()
	case c == ':':
		return p.bytes()
	case c == '?':
		return p.boolean()
	case c == '*' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return p.token()
	}
	return sfValue{}, false
}

// number reads an Integer (at most 15 digits) or a Decimal (at most 12
// integer and 3 fraction digits).
func (p *sfParser) number() (sfValue, bool) {
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	var intPart float64
	digits := 0
	for ; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; p.i++ {
		intPart = intPart*10 + float64(p.s[p.i]-'0')
		digits++
	}
	if digits == 0 || digits > 15 {
		return sfValue{}, false
	}
	n := intPart
	if p.peek() == '.' {
		if digits > 12 {
			return sfValue{}, false
		}
		p.i++
		scale, frac := 1.0, 0
		for ; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; p.i++ {
			scale /= 10
			n += float64(p.s[p.i]-'0') * scale
			frac++
		}
		if frac == 0 || frac > 3 {
			return sfValue{}, false
		}
	}
	if neg {
		n = -n
	}
	return sfValue{kind: sfNumber, num: n}, true
}

func (p *sfParser) str() (sfValue, bool) {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i == len(p.s) || (p.s[p.i] != '"' && p.s[p.i] != '\\') {
				return sfValue{}, false
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return sfValue{kind: sfString, str: b.String()}, true
		case c < 0x20 || c > 0x7e:
			return sfValue{}, false
		default:
			b.WriteByte(c)
		}
	}
	return sfValue{}, false // no closing quote
}

func (p *sfParser) token() (sfValue, bool) {
	start := p.i
	for p.i++; p.i < len(p.s) && isTokenChar(p.s[p.i]); p.i++ {
	}
	return sfValue{kind: sfToken, str: p.s[start:p.i]}, true
}

// isTokenChar reports whether c is a tchar, ':' or '/'.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~:/", c) >= 0
}

func (p *sfParser) bytes() (sfValue, bool) {
	p.i++ // the opening colon
	start := p.i
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if c == ':' {
			p.i++
			return sfValue{kind: sfBytes, str: p.s[start : p.i-1]}, true
		}
		if !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '+' && c != '/' && c != '=' {
			return sfValue{}, false
		}
	}
	return sfValue{}, false
}

func (p *sfParser) boolean() (sfValue, bool) {
	if p.i+1 >= len(p.s) || (p.s[p.i+1] != '0' && p.s[p.i+1] != '1') {
		return sfValue{}, false
	}
	v := sfValue{kind: sfBool}
	p.i += 2
	return v, true
}
