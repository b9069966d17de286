package hostlist

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Expand returns the host names denoted by the Slurm hostlist expression expr,
// in the order Slurm's hostlist_create produces them. Duplicates are kept.
// An empty expression, or one made only of separators, yields no names.
//
// Items are separated by ',', ' ', '\t' or '\n' outside brackets. An item is
// text with any number of "[ranges]" groups; each range is N or N-M and is
// zero-padded to the width of N as written. Several groups give a Cartesian
// product. Like Slurm, the last group varies fastest and the groups before it
// are iterated from right to left, so "a[1-2]b[1-2]c[1-2]" yields a1b1c1,
// a1b1c2, a2b1c1, a2b1c2, a1b2c1, and so on; for one or two groups that is
// plain written order.
//
// Errors wrap ErrSyntax, ErrTooMany or ErrUnsupported and quote the item.
func Expand(expr string) ([]string, error) {
	return expand(expr, limits{hosts: MaxHosts, bytes: MaxBytes})
}

// limits are the caps of one expansion; tests lower them.
type limits struct {
	hosts int
	bytes int
}

// rng is one N-M range of a bracket group.
type rng struct {
	lo, hi uint64
	width  int // length of the low bound as written
}

// group is one bracket group: ranges[start:end] of the parser.
type group struct {
	start, end int
	count      uint64 // hosts, summed over the ranges
	maxLen     int    // longest number the group can print
}

// expander holds buffers reused across the items of one expression.
type expander struct {
	lim    limits
	out    []string
	bytes  int
	lits   []string
	groups []group
	ranges []rng
	ends   []int
	curs   []cursor
	order  []int
	num    [24]byte
}

func expand(expr string, lim limits) ([]string, error) {
	e := &expander{lim: lim}
	return e.expand(expr)
}

// An Expander expands one expression after another with the same
// buffers, as Expand does each (a cluster model holds thousands). The
// zero value is ready; an Expander is not safe for concurrent use.
type Expander struct{ e expander }

// Expand returns Expand(expr); the names are the caller's.
func (x *Expander) Expand(expr string) ([]string, error) {
	x.e.lim, x.e.out, x.e.bytes = limits{hosts: MaxHosts, bytes: MaxBytes}, nil, 0
	return x.e.expand(expr)
}

// expand appends the names of expr to e.out and returns it.
func (e *expander) expand(expr string) ([]string, error) {
	for i := 0; i < len(expr); {
		if isSep(expr[i]) {
			i++
			continue
		}
		end := itemEnd(expr, i)
		if err := e.item(expr[i:end]); err != nil {
			return nil, err
		}
		i = end
	}
	return e.out, nil
}

func isSep(c byte) bool {
	return c == ',' || c == ' ' || c == '\t' || c == '\n'
}

// itemEnd returns the index just past the item starting at start: the first
// separator outside brackets, or the end of expr.
func itemEnd(expr string, start int) int {
	depth := 0
	for i := start; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '[':
			depth++
		case c == ']':
			if depth > 0 {
				depth--
			}
		case depth == 0 && isSep(c):
			return i
		}
	}
	return len(expr)
}

// itemError builds an error wrapping sentinel that quotes item.
func itemError(sentinel error, item, format string, args ...any) error {
	return fmt.Errorf("%w: item %s: %s", sentinel, quote(item), fmt.Sprintf(format, args...))
}

// quote quotes s for an error message, shortening very long text.
func quote(s string) string {
	const maxQuoted = 80
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// item parses one item and appends its names to e.out.
func (e *expander) item(item string) error {
	e.lits, e.groups, e.ranges = e.lits[:0], e.groups[:0], e.ranges[:0]
	litStart := 0
	for i := 0; i < len(item); i++ {
		switch item[i] {
		case '[':
			j := i + 1
			for j < len(item) && item[j] != ']' {
				if item[j] == '[' {
					return itemError(ErrSyntax, item, "nested '[' at offset %d", j)
				}
				j++
			}
			if j == len(item) {
				return itemError(ErrSyntax, item, "'[' at offset %d has no matching ']'", i)
			}
			e.lits = append(e.lits, item[litStart:i])
			if err := e.parseGroup(item, item[i+1:j]); err != nil {
				return err
			}
			i, litStart = j, j+1
		case ']':
			return itemError(ErrSyntax, item, "']' at offset %d has no matching '['", i)
		case '{', '}':
			return itemError(ErrUnsupported, item, "hostlist functions ({...}) cannot be expanded offline")
		}
	}
	e.lits = append(e.lits, item[litStart:])

	for _, g := range e.groups[:max(len(e.groups)-1, 0)] {
		if g.count > MaxPrefixCount {
			return itemError(ErrTooMany, item, "a bracket group before the last one expands to %d hosts, more than %d", g.count, MaxPrefixCount)
		}
	}
	count, maxLen := uint64(1), 0
	for _, l := range e.lits {
		maxLen += len(l)
	}
	roomHosts := uint64(e.lim.hosts - len(e.out))
	for _, g := range e.groups {
		if count > roomHosts/g.count {
			return itemError(ErrTooMany, item, "the expression expands to more than %d hosts", e.lim.hosts)
		}
		count *= g.count
		maxLen += g.maxLen
	}
	if count > roomHosts {
		return itemError(ErrTooMany, item, "the expression expands to more than %d hosts", e.lim.hosts)
	}
	roomBytes := uint64(e.lim.bytes - e.bytes)
	if maxLen > 0 && count > roomBytes/uint64(maxLen) {
		return itemError(ErrTooMany, item, "the expression expands to more than %d bytes of names", e.lim.bytes)
	}
	if len(e.groups) == 0 {
		e.out = append(e.out, item)
		e.bytes += len(item)
		return nil
	}
	e.generate(int(count), int(count)*maxLen)
	return nil
}

// parseGroup parses the text between one pair of brackets.
func (e *expander) parseGroup(item, body string) error {
	if body == "" {
		return itemError(ErrSyntax, item, "empty brackets")
	}
	g := group{start: len(e.ranges)}
	for {
		part, rest, more := strings.Cut(body, ",")
		if len(e.ranges)-g.start == MaxRangesPerBracket {
			return itemError(ErrTooMany, item, "more than %d ranges in one bracket", MaxRangesPerBracket)
		}
		r, err := parseRange(item, part)
		if err != nil {
			return err
		}
		e.ranges = append(e.ranges, r)
		g.count += r.hi - r.lo + 1
		g.maxLen = max(g.maxLen, r.width, digits(r.hi))
		if !more {
			break
		}
		body = rest
	}
	g.end = len(e.ranges)
	e.groups = append(e.groups, g)
	return nil
}

// parseRange parses "N" or "N-M".
func parseRange(item, part string) (rng, error) {
	if part == "" {
		return rng{}, itemError(ErrSyntax, item, "empty range")
	}
	loS, hiS, dash := strings.Cut(part, "-")
	if dash && loS == "" {
		return rng{}, itemError(ErrSyntax, item, "range %s has no low bound (negative numbers are not allowed)", quote(part))
	}
	if dash && hiS == "" {
		return rng{}, itemError(ErrSyntax, item, "range %s has no high bound", quote(part))
	}
	lo, err := parseBound(item, part, loS)
	if err != nil {
		return rng{}, err
	}
	hi := lo
	if dash {
		if hi, err = parseBound(item, part, hiS); err != nil {
			return rng{}, err
		}
	}
	if lo > hi {
		return rng{}, itemError(ErrSyntax, item, "range %s has low bound %d greater than high bound %d", quote(part), lo, hi)
	}
	if hi-lo >= MaxRange {
		return rng{}, itemError(ErrTooMany, item, "range %s has %d hosts, more than %d", quote(part), hi-lo+1, MaxRange)
	}
	return rng{lo: lo, hi: hi, width: len(loS)}, nil
}

// parseBound parses one decimal bound of a range.
func parseBound(item, part, s string) (uint64, error) {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, itemError(ErrSyntax, item, "range %s contains non-digit %q", quote(part), s[i])
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	// Slurm stores bounds in an unsigned long and treats ULONG_MAX as "empty".
	if err != nil || v == math.MaxUint64 {
		return 0, itemError(ErrSyntax, item, "range %s: number %s is too large", quote(part), quote(s))
	}
	return v, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits returns the number of decimal digits of v.
func digits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// cursor walks the values of one group.
type cursor struct {
	ri int    // index into expander.ranges
	v  uint64 // current value
}

// generate writes the count names of the current item into one buffer of at
// most size bytes and appends them to e.out.
func (e *expander) generate(count, size int) {
	var b strings.Builder
	b.Grow(size)
	e.ends = slices.Grow(e.ends[:0], count)
	if len(e.groups) == 1 {
		pre, suf := e.lits[0], e.lits[1]
		for _, r := range e.ranges {
			for v := r.lo; v <= r.hi; v++ {
				b.WriteString(pre)
				e.writeNum(&b, v, r.width)
				b.WriteString(suf)
				e.ends = append(e.ends, b.Len())
			}
		}
	} else {
		e.product(&b)
	}
	s := b.String()
	e.out = slices.Grow(e.out, count)
	prev := 0
	for _, end := range e.ends {
		e.out = append(e.out, s[prev:end])
		prev = end
	}
	e.bytes += len(s)
}

// product writes the Cartesian product of several groups in Slurm's order:
// the groups before the last are nested from right (outermost) to left, and
// the last group is innermost.
func (e *expander) product(b *strings.Builder) {
	n := len(e.groups)
	e.curs = e.curs[:0]
	for _, g := range e.groups {
		e.curs = append(e.curs, cursor{ri: g.start, v: e.ranges[g.start].lo})
	}
	e.order = e.order[:0]
	for k := n - 2; k >= 0; k-- {
		e.order = append(e.order, k)
	}
	e.order = append(e.order, n-1)
	for {
		for k, c := range e.curs {
			b.WriteString(e.lits[k])
			e.writeNum(b, c.v, e.ranges[c.ri].width)
		}
		b.WriteString(e.lits[n])
		e.ends = append(e.ends, b.Len())
		// Advance the odometer, innermost position first.
		p := len(e.order) - 1
		for ; p >= 0; p-- {
			k := e.order[p]
			if e.advance(k) {
				break
			}
			g := e.groups[k]
			e.curs[k] = cursor{ri: g.start, v: e.ranges[g.start].lo}
		}
		if p < 0 {
			return
		}
	}
}

// advance moves group k's cursor to its next value and reports whether it
// did so without wrapping around.
func (e *expander) advance(k int) bool {
	c := &e.curs[k]
	if c.v < e.ranges[c.ri].hi {
		c.v++
		return true
	}
	if c.ri+1 < e.groups[k].end {
		c.ri++
		c.v = e.ranges[c.ri].lo
		return true
	}
	return false
}

// writeNum writes v zero-padded to width.
func (e *expander) writeNum(b *strings.Builder, v uint64, width int) {
	d := strconv.AppendUint(e.num[:0], v, 10)
	for i := len(d); i < width; i++ {
		b.WriteByte('0')
	}
	b.Write(d)
}
