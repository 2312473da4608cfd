package robots

import "unicode/utf8"

// isSpaceRune reports whether r is white space as a reader of a robots.txt
// sees it: RFC 9309's space and tab, the other ASCII spaces, the Unicode
// spaces (U+00A0 no-break space, U+2000 to U+200A, U+3000 and the rest of
// unicode.IsSpace) and the invisible U+200B zero width space and U+2060
// word joiner. Real files carry them around values and names, where a
// reader does not see them. (A byte order mark is skipped at the start of
// the file only: a line after one in the middle is not read, as Google's
// parser and its tests have it.) So does a lone 0xA0 octet,
// the no-break space of a file written in Latin-1, which is no rune:
// leadingSpace and trailingSpace tell it (an 0xA0 that ends a UTF-8
// sequence, as in "à", is no space).
func isSpaceRune(r rune) bool {
	switch r {
	case ' ', '\t', '\v', '\f', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
		0x200B, 0x2060:
		return true
	}
	return 0x2000 <= r && r <= 0x200A
}

// leadingSpace returns the length in octets of the white space that b
// starts with, one character of it; 0 if none.
func leadingSpace(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] < utf8.RuneSelf {
		if isSpaceRune(rune(b[0])) {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n == 1 {
		if b[0] == 0xA0 {
			return 1
		}
		return 0
	}
	if isSpaceRune(r) {
		return n
	}
	return 0
}

// trailingSpace returns the length in octets of the white space that b
// ends with, one character of it; 0 if none.
func trailingSpace(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	last := b[len(b)-1]
	if last < utf8.RuneSelf {
		if isSpaceRune(rune(last)) {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeLastRune(b)
	if r == utf8.RuneError && n == 1 {
		if last == 0xA0 {
			return 1
		}
		return 0
	}
	if isSpaceRune(r) {
		return n
	}
	return 0
}

// trimLeft returns b without the white space it starts with.
func trimLeft(b []byte) []byte {
	for n := leadingSpace(b); n > 0; n = leadingSpace(b) {
		b = b[n:]
	}
	return b
}

// trimRight returns b without the white space it ends with.
func trimRight(b []byte) []byte {
	for n := trailingSpace(b); n > 0; n = trailingSpace(b) {
		b = b[:len(b)-n]
	}
	return b
}

// trim returns b without the white space around it.
func trim(b []byte) []byte {
	return trimRight(trimLeft(b))
}

// indexSpace returns the index of the first white space in b, or -1.
func indexSpace(b []byte) int {
	for i := 0; i < len(b); {
		if leadingSpace(b[i:]) > 0 {
			return i
		}
		_, n := utf8.DecodeRune(b[i:])
		i += n
	}
	return -1
}
