// Package hostlist expands and compresses Slurm hostlist expressions such as
// "gpu[001-128],login1".
//
// The grammar follows Slurm's src/common/hostlist.c (hostlist_create on a
// one-dimensional cluster):
//
//	list   := item { SEP item }        SEP is ',', ' ', '\t' or '\n' outside brackets
//	item   := text { '[' ranges ']' text }
//	ranges := range { ',' range }
//	range  := N | N '-' M              decimal, N <= M
//
// Zero padding comes from the width of the low bound as written: "n[01-16]"
// gives n01..n16, "n[1-16]" gives n1..n16 and "n[001-1000]" gives n001..n999
// and then n1000. Several bracket groups in one item give a Cartesian product.
//
// [Expand] is deliberately stricter than Slurm in a few corner cases that
// Slurm accepts by accident (an empty range as in "n[1,]", a missing high
// bound as in "n[1-]", whitespace inside brackets, a stray ']'), and it
// rejects the "{...}" hostlist functions of Slurm 24.11 and later, which need
// the controller's state to evaluate. Everything Expand accepts expands to the
// same names, in the same order, as Slurm.
//
// [Compress] produces the compact form that Expand and Slurm both map back to
// exactly the input set, and [Less], [Compare] and [Sort] expose the natural
// order it uses so that other packages can order node names identically.
//
// The package has no mutable package-level state; every function is safe for
// concurrent use.
package hostlist

import "errors"

// Limits enforced by [Expand]. MaxRange, MaxPrefixCount and
// MaxRangesPerBracket mirror Slurm's MAX_RANGE, MAX_PREFIX_CNT and MAX_RANGES;
// MaxHosts and MaxBytes keep a hostile expression from exhausting memory.
const (
	// MaxRange is the most hosts one N-M range may produce.
	MaxRange = 65536
	// MaxPrefixCount is the most hosts a bracket group other than the last
	// one of an item may produce, summed over its ranges.
	MaxPrefixCount = 65536
	// MaxRangesPerBracket is the most comma-separated ranges in one bracket.
	MaxRangesPerBracket = 1 << 18
	// MaxHosts is the most names one call to Expand returns.
	MaxHosts = 1 << 22
	// MaxBytes bounds the total size of the names one call to Expand
	// returns. Each item is charged its host count times its longest name.
	MaxBytes = 1 << 28
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers can test with errors.Is; the message names the offending
// item or name.
var (
	// ErrSyntax reports a malformed hostlist expression: a '[' without ']',
	// a stray ']', a nested '[', an empty range, a non-digit in a range, a
	// low bound greater than the high bound or a number that does not fit in
	// Slurm's unsigned long.
	ErrSyntax = errors.New("hostlist: syntax error")
	// ErrTooMany reports an expression that exceeds one of the limits
	// MaxRange, MaxPrefixCount, MaxRangesPerBracket, MaxHosts or MaxBytes.
	ErrTooMany = errors.New("hostlist: too many hosts")
	// ErrUnsupported reports syntax that is valid in some Slurm version but
	// cannot be expanded offline, namely the "{...}" hostlist functions.
	ErrUnsupported = errors.New("hostlist: unsupported syntax")
	// ErrInvalidName reports a name that is not a valid hostlist atom; see
	// ValidName.
	ErrInvalidName = errors.New("hostlist: invalid host name")
)
