package slurm

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrVersion is wrapped when a Slurm version string cannot be parsed.
var ErrVersion = errors.New("invalid Slurm version")

// Version is a Slurm release series, major×100 + minor: 2411 is 24.11.
// Slurm's feature gates are per series, so patch levels are ignored.
type Version int

// The Slurm series whose rules the engine knows.
const (
	// V2305 is the last series without topology/block.
	V2305 Version = 2305
	// V2311 added topology/block, configured with BlockLevels=.
	V2311 Version = 2311
	// V2405 replaced BlockLevels= with BlockSizes=.
	V2405 Version = 2405
	// V2411 is the default target: the series in Debian trixie.
	V2411 Version = 2411
	// V2505 added topology.yaml, empty switches and blocks, and blocks
	// smaller than the base block size.
	V2505 Version = 2505
)

// DefaultVersion is the Slurm series targeted when slurmVersion is unset.
const DefaultVersion = V2411

// ParseVersion parses "major.minor" or "major.minor.patch" (for example
// "24.11" or "24.11.5"); the patch level is ignored.
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("%q: want major.minor such as 24.11: %w", s, ErrVersion)
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || p[0] == '+' {
			return 0, fmt.Errorf("%q: %q is not a number: %w", s, p, ErrVersion)
		}
		nums[i] = n
	}
	major, minor := nums[0], nums[1]
	if major < 14 || major > 99 {
		return 0, fmt.Errorf("%q: major version %d is not a Slurm release year: %w", s, major, ErrVersion)
	}
	if minor < 1 || minor > 12 {
		return 0, fmt.Errorf("%q: minor version %d is not a release month (1-12): %w", s, minor, ErrVersion)
	}
	v := Version(major*100 + minor)
	if !slices.Contains(Releases(), v) {
		return 0, fmt.Errorf("%q: not a Slurm release series (the releases toposcope knows: %s): %w", s, releaseList(), ErrVersion)
	}
	return v, nil
}

// Releases returns the Slurm release series, oldest first: a version that
// is not one of them is a typo or a future release whose format is
// unknown.
func Releases() []Version {
	return []Version{
		1403, 1411, 1508, 1605, 1702, 1711, 1808, 1905, 2002, 2011, 2108, 2205,
		2302, 2311, 2405, 2411, 2505, 2511, 2605,
	}
}

func releaseList() string {
	rs := Releases()
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// String returns the series as "24.11".
func (v Version) String() string {
	return fmt.Sprintf("%02d.%02d", int(v)/100, int(v)%100)
}

// AtLeast reports whether v is series o or later.
func (v Version) AtLeast(o Version) bool { return v >= o }
