package robots

import "strings"

// match reports whether the rule pattern pat (in its compared form) matches
// path from its first octet: '*' stands for any run of octets and a final
// '$' for the end of path. The pattern is cut at its '*'s into literal
// segments, each found leftmost after the one before; a glob of '*'s alone
// needs no more (a segment found further right could only leave less room
// to the segments after it), so the work is linear in len(pat) + len(path)
// for each rule, with no backtracking. If steps is not nil, it is increased
// by the number of path octets the segment searches went over.
func match(pat, path string, steps *int) bool {
	anchored := strings.HasSuffix(pat, "$")
	if anchored {
		pat = pat[:len(pat)-1]
	}
	star := strings.IndexByte(pat, '*')
	if star < 0 {
		if anchored {
			return pat == path
		}
		return strings.HasPrefix(path, pat)
	}
	if !strings.HasPrefix(path, pat[:star]) {
		return false
	}
	pos := star
	pat = pat[star+1:]
	for {
		star = strings.IndexByte(pat, '*')
		if star < 0 {
			break
		}
		seg := pat[:star]
		pat = pat[star+1:]
		if seg == "" {
			continue
		}
		i := strings.Index(path[pos:], seg)
		if i < 0 {
			if steps != nil {
				*steps += 1 + len(path) - pos
			}
			return false
		}
		if steps != nil {
			*steps += 1 + i + len(seg)
		}
		pos += i + len(seg)
	}
	if steps != nil {
		*steps += 1 + len(path) - pos
	}
	if anchored {
		return len(path)-pos >= len(pat) && strings.HasSuffix(path, pat)
	}
	return strings.Contains(path[pos:], pat)
}
