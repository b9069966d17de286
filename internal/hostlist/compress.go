package hostlist

import (
	"cmp"
	"slices"
)

// maxRangedDigits is the longest trailing number Compress puts into a range;
// longer numbers stay plain names. 19 digits always fit in a uint64.
const maxRangedDigits = 19

// compressRangesPerBracket caps the ranges Compress writes into one bracket.
// It is MAX_RANGES of older Slurm releases (64K); newer ones allow 256K.
const compressRangesPerBracket = 1 << 16

// Compress returns the compact, deterministic hostlist expression for names,
// joined with ','. It ignores the order of names and removes duplicates;
// empty input gives "".
//
// Names are sorted in the order of Compare. Names that share a prefix (the
// text before the trailing run of digits) are grouped as prefix[a-b,c,...].
// Each range keeps the zero padding its names were written with: n01..n16
// gives "n[01-16]", n1..n16 gives "n[1-16]", and n001..n1000 gives
// "n[001-1000]", because a number without a leading zero that is at least as
// wide as the padding prints the same either way. Names written with
// different paddings go into separate groups ("n[1-2],n[01-02]"). A group of
// one name, and a name without trailing digits, stays plain. No range holds
// more than MaxRange names, no group more than 65536 ranges, and no group
// needs a suffix after ']', so every Slurm release parses the result.
//
// Compress requires every name to be a valid hostlist atom (see ValidName).
// For such names, Expand(Compress(names)) yields exactly the sorted unique
// names as a set, provided there are at most MaxHosts of them; the expansion
// is in Compare order unless a prefix mixes paddings. Invalid names are copied into
// the result verbatim, which then does not round-trip.
//
// Compress runs in O(n log n) time with a handful of allocations, and is
// meant for lists of hundreds of thousands of names.
func Compress(names []string) string {
	var z Compressor
	return string(z.Append(nil, names))
}

// A Compressor compresses one list of names after another into the
// same buffers, as Compress does each: a Slurm topology.conf holds a
// hostlist per switch or block, thousands at 100,000 nodes. The zero
// value is ready; a Compressor is not safe for concurrent use.
type Compressor struct {
	c        compressor
	recs     []record
	ids      map[string]int32
	prefixes []string
	order    []int32
	rank     []int32
}

// Append appends Compress(names) to dst.
func (z *Compressor) Append(dst []byte, names []string) []byte {
	if len(names) == 0 {
		return dst
	}
	recs := z.records(names)
	slices.SortFunc(recs, compareRecords)
	recs = slices.CompactFunc(recs, func(a, b record) bool { return a.name == b.name })

	z.c.out, z.c.started = dst, false
	for i := 0; i < len(recs); {
		r := recs[i]
		if r.kind == kindPlain {
			z.c.plain(r.name)
			i++
			continue
		}
		j := i + 1
		for j < len(recs) && recs[j].rank == r.rank && recs[j].kind != kindPlain {
			j++
		}
		z.c.run(r.name[:r.p], recs[i:j])
		i = j
	}
	out := z.c.out
	z.c.out = nil
	return out
}

// Kinds of trailing digits of a record.
const (
	kindPlain  = iota // no trailing digits
	kindRanged        // 1 to maxRangedDigits trailing digits, value in val
	kindBig           // more trailing digits; the name stays plain
)

// record is a name split for sorting. rank orders the distinct prefixes, so
// that sorting rarely needs to look at the name itself.
type record struct {
	name string
	p    int // index where the trailing digits start
	val  uint64
	rank int32
	kind uint8
}

// records splits names and ranks their prefixes in comparePrefix order,
// in the Compressor's buffers.
func (z *Compressor) records(names []string) []record {
	recs := slices.Grow(z.recs[:0], len(names))[:len(names)]
	if z.ids == nil {
		z.ids = make(map[string]int32)
	}
	clear(z.ids)
	prefixes := z.prefixes[:0]
	last, lastID := "", int32(-1)
	for i, n := range names {
		r := record{name: n, p: digitStart(n)}
		if d := n[r.p:]; len(d) > maxRangedDigits {
			r.kind = kindBig
		} else if d != "" {
			r.kind = kindRanged
			for k := 0; k < len(d); k++ {
				r.val = r.val*10 + uint64(d[k]-'0')
			}
		}
		pre := n[:r.p]
		if lastID < 0 || pre != last {
			id, ok := z.ids[pre]
			if !ok {
				id = int32(len(prefixes))
				z.ids[pre] = id
				prefixes = append(prefixes, pre)
			}
			last, lastID = pre, id
		}
		r.rank = lastID // an id for now
		recs[i] = r
	}
	order := slices.Grow(z.order[:0], len(prefixes))[:len(prefixes)]
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return comparePrefix(prefixes[a], prefixes[b]) })
	rank := slices.Grow(z.rank[:0], len(prefixes))[:len(prefixes)]
	for i, id := range order {
		rank[id] = int32(i)
	}
	for i := range recs {
		recs[i].rank = rank[recs[i].rank]
	}
	z.recs, z.prefixes, z.order, z.rank = recs, prefixes, order, rank
	return recs
}

// compareRecords orders records as Compare orders their names.
func compareRecords(a, b record) int {
	if a.rank != b.rank {
		return cmp.Compare(a.rank, b.rank)
	}
	if a.kind == kindRanged && b.kind == kindRanged {
		if a.val != b.val {
			return cmp.Compare(a.val, b.val)
		}
		return cmp.Compare(len(a.name), len(b.name))
	}
	return compareSplit(a.name[:a.p], a.name[a.p:], b.name[:b.p], b.name[b.p:])
}

// span is a run of consecutive numbers of one prefix, all printed with the
// zero padding of the low bound: recs[lo..hi] of the current prefix run.
type span struct {
	lo, hi       int
	loVal, hiVal uint64
	width        int  // digits of the low bound
	padded       bool // the low bound has a leading zero
}

// compressor holds the output and buffers reused across prefix runs.
type compressor struct {
	out     []byte
	started bool // an item has been written
	spans   []span
	active  []int // spans that the next value may still extend
	big     []int // names whose trailing number is too long to range
}

// sep writes the separator before every item but the first.
func (c *compressor) sep() {
	if c.started {
		c.out = append(c.out, ',')
	}
	c.started = true
}

// plain writes name as an item of its own.
func (c *compressor) plain(name string) {
	c.sep()
	c.out = append(c.out, name...)
}

// run compresses recs, which all have the given prefix and trailing digits
// and are sorted by (value, width).
func (c *compressor) run(prefix string, recs []record) {
	c.spans, c.active, c.big = c.spans[:0], c.active[:0], c.big[:0]
	for k, r := range recs {
		d := r.name[r.p:]
		if r.kind == kindBig {
			c.big = append(c.big, k)
			continue
		}
		c.add(k, r.val, d)
	}

	// Group spans into brackets: a padded span by its width; an unpadded one
	// with the padded spans of its own width if there are any (so that
	// gpu001..gpu050 and gpu100 share "gpu[001-050,100]"), else with the
	// other unpadded spans. Brackets come in order of their first span.
	var paddedWidths uint32
	for _, s := range c.spans {
		if s.padded {
			paddedWidths |= 1 << s.width
		}
	}
	key := func(s span) int {
		if s.padded || paddedWidths&(1<<s.width) != 0 {
			return s.width
		}
		return 0
	}
	var done uint32
	for i, s := range c.spans {
		k := key(s)
		if done&(1<<k) != 0 {
			continue
		}
		done |= 1 << k
		c.bracket(prefix, recs, i, k, key)
	}
	for _, k := range c.big {
		c.plain(recs[k].name)
	}
}

// add puts the name recs[k], whose trailing digits d have value v, into a
// span: it extends the widest span whose high bound is v-1 and that prints v
// as d, or starts a new one.
func (c *compressor) add(k int, v uint64, d string) {
	padded := len(d) > 1 && d[0] == '0'
	best := -1
	keep := c.active[:0]
	for _, ai := range c.active {
		s := &c.spans[ai]
		if s.hiVal+1 < v {
			continue // can never be extended again
		}
		keep = append(keep, ai)
		if v == 0 || s.hiVal != v-1 || s.hiVal-s.loVal+1 >= MaxRange {
			continue
		}
		// A span of width w prints v as d if d has exactly w digits and a
		// leading zero, or if d has no leading zero and at least w digits.
		if (padded && s.width == len(d)) || (!padded && s.width <= len(d)) {
			if best < 0 || s.width > c.spans[best].width {
				best = ai
			}
		}
	}
	c.active = keep
	if best >= 0 {
		c.spans[best].hi, c.spans[best].hiVal = k, v
		return
	}
	c.spans = append(c.spans, span{lo: k, hi: k, loVal: v, hiVal: v, width: len(d), padded: padded})
	c.active = append(c.active, len(c.spans)-1)
}

// bracket writes the spans from index first on whose key is k.
func (c *compressor) bracket(prefix string, recs []record, first, k int, key func(span) int) {
	n := 0
	for _, s := range c.spans[first:] {
		if key(s) == k {
			n++
		}
	}
	if s := c.spans[first]; n == 1 && s.lo == s.hi {
		c.plain(recs[s.lo].name)
		return
	}
	inBracket := 0
	for _, s := range c.spans[first:] {
		if key(s) != k {
			continue
		}
		if inBracket == compressRangesPerBracket {
			c.out = append(c.out, ']')
			inBracket = 0
		}
		if inBracket == 0 {
			c.sep()
			c.out = append(append(c.out, prefix...), '[')
		} else {
			c.out = append(c.out, ',')
		}
		lo := recs[s.lo]
		c.out = append(c.out, lo.name[lo.p:]...)
		if s.hi != s.lo {
			hi := recs[s.hi]
			c.out = append(append(c.out, '-'), hi.name[hi.p:]...)
		}
		inBracket++
	}
	c.out = append(c.out, ']')
}
