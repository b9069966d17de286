package hostlist

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Compare orders host names naturally and returns -1, 0 or +1. It is the
// order Compress uses, and it is a total order: Compare returns 0 only for
// identical strings.
//
// A name is split into a prefix and its trailing run of digits ("gpu001" is
// "gpu" and "001"). Names compare by prefix first, then a name without
// trailing digits sorts before those with them, then by the numeric value of
// the trailing digits, then by their width, so the unpadded form comes first:
// n1 < n01 < n2 < n10. Prefixes themselves compare naturally: runs of digits
// inside them compare by value and then width, other bytes compare as bytes,
// so rack2-n1 < rack10-n1. Because the prefix decides first, all names that
// share a prefix are contiguous in this order (n5 < n9 < n3x).
func Compare(a, b string) int {
	pa, pb := digitStart(a), digitStart(b)
	return compareSplit(a[:pa], a[pa:], b[:pb], b[pb:])
}

// Less reports whether host name a sorts before b in the natural order
// described at Compare (n2 < n10, gpu001 < gpu002).
func Less(a, b string) bool { return Compare(a, b) < 0 }

// Sort sorts names in place in the natural order described at Compare.
func Sort(names []string) { slices.SortFunc(names, Compare) }

// digitStart returns the index where the trailing run of digits of s starts,
// or len(s) if s does not end in a digit.
func digitStart(s string) int {
	i := len(s)
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	return i
}

// compareSplit compares two names given as prefix and trailing digits.
func compareSplit(pa, da, pb, db string) int {
	if pa != pb {
		return comparePrefix(pa, pb)
	}
	switch {
	case da == db:
		return 0
	case da == "":
		return -1
	case db == "":
		return 1
	}
	return compareDigits(da, db)
}

// comparePrefix compares two strings naturally: maximal runs of digits
// compare with compareDigits, any other byte compares as a byte, and a string
// that runs out first sorts first.
func comparePrefix(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			ei, ej := i+1, j+1
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			if c := compareDigits(a[i:ei], b[j:ej]); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
		i++
		j++
	}
	return cmp.Compare(len(a)-i, len(b)-j)
}

// compareDigits compares two non-empty digit strings by numeric value, of any
// length, and then by width, so "7" < "07" < "10".
func compareDigits(x, y string) int {
	tx, ty := strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
	if len(tx) != len(ty) {
		return cmp.Compare(len(tx), len(ty))
	}
	if c := strings.Compare(tx, ty); c != 0 {
		return c
	}
	return cmp.Compare(len(x), len(y))
}

// maxUint64Digits is math.MaxUint64 in decimal.
const maxUint64Digits = "18446744073709551615"

// ValidName reports why s is not a valid hostlist atom, or returns nil if it
// is one. Compress requires valid atoms; a valid atom is expanded by Expand
// and by Slurm to exactly itself.
//
// A valid atom is non-empty; contains none of ',', '[', ']', space, tab or
// newline (hostlist syntax), '{' or '}' (Slurm 24.11 hostlist functions) or
// any other ASCII control character; and, if it ends in digits, their value
// is below 2^64-1, because Slurm parses the trailing number into an unsigned
// long and would print a larger one differently. Errors wrap ErrInvalidName.
func ValidName(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ',' || c == '[' || c == ']' || c == ' ' || c == '\t' || c == '\n':
			return fmt.Errorf("%w: %s: contains %q, which is hostlist syntax", ErrInvalidName, quote(s), c)
		case c == '{' || c == '}':
			return fmt.Errorf("%w: %s: contains %q, which Slurm reserves for hostlist functions", ErrInvalidName, quote(s), c)
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("%w: %s: contains control character %q", ErrInvalidName, quote(s), c)
		}
	}
	t := strings.TrimLeft(s[digitStart(s):], "0")
	if len(t) > len(maxUint64Digits) || (len(t) == len(maxUint64Digits) && t >= maxUint64Digits) {
		return fmt.Errorf("%w: %s: trailing number is 2^64-1 or more, which Slurm cannot represent", ErrInvalidName, quote(s))
	}
	return nil
}
