package hostlist

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// sortUnique returns the sorted unique copy of names.
func sortUnique(names []string) []string {
	out := slices.Clone(names)
	Sort(out)
	return slices.Compact(out)
}

// checkRoundTrip fails t unless Expand(expr), as a set, is sortUnique(names).
func checkRoundTrip(t *testing.T, names []string, expr string) {
	t.Helper()
	got, err := Expand(expr)
	if err != nil {
		t.Fatalf("Expand(Compress(%q)) = Expand(%q) error: %v", head(names), expr, err)
	}
	if hasDup(got) {
		t.Fatalf("Expand(%q) has duplicates", expr)
	}
	Sort(got)
	if want := sortUnique(names); !slices.Equal(got, want) {
		t.Fatalf("Expand(Compress(x)) != sortunique(x)\n x    = %q\n expr = %q\n got  = %q\n want = %q",
			head(names), expr, head(got), head(want))
	}
}

func hasDup(names []string) bool {
	s := slices.Clone(names)
	Sort(s)
	return len(slices.Compact(s)) != len(names)
}

func TestCompress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{"nil", nil, ""},
		{"empty", []string{}, ""},
		{"single", []string{"gpu001"}, "gpu001"},
		{"single without digits", []string{"login"}, "login"},
		{"padded", seq("n", 1, 16, 2, ""), "n[01-16]"},
		{"unpadded", seq("n", 1, 16, 1, ""), "n[1-16]"},
		{"unpadded shuffled", []string{"n10", "n2", "n9", "n1"}, "n[1-2,9-10]"},
		{"padding from low bound", seq("n", 1, 1000, 3, ""), "n[001-1000]"},
		{"padded into unpadded width", seq("gpu", 1, 128, 3, ""), "gpu[001-128]"},
		{"unpadded joins padded width", []string{"gpu001", "gpu002", "gpu100"}, "gpu[001-002,100]"},
		{"mixed prefixes", []string{"a1", "b2", "a2"}, "a[1-2],b2"},
		{"mixed widths", []string{"n1", "n01", "n2", "n02"}, "n[1-2],n[01-02]"},
		{"mixed widths single", []string{"n01", "n1", "n2"}, "n[1-2],n01"},
		{"padded then short unpadded", []string{"n01", "n02", "n3", "n4"}, "n[01-02],n[3-4]"},
		{"zero", []string{"n0", "n1", "n00", "n01"}, "n[0-1],n[00-01]"},
		{"no digits", []string{"login", "admin", "login"}, "admin,login"},
		{"no digits and digits", []string{"n", "n1", "n2"}, "n,n[1-2]"},
		{"duplicates", []string{"n1", "n1", "n2", "n2", "n2"}, "n[1-2]"},
		{"gaps", []string{"n1", "n3", "n4", "n5", "n7"}, "n[1,3-5,7]"},
		{"all digits", []string{"3", "1", "2"}, "[1-3]"},
		{"digits mid name", []string{"n1-ib", "n2-ib"}, "n1-ib,n2-ib"},
		{"natural prefix order", []string{"rack10-n1", "rack2-n1", "rack2-n2"}, "rack2-n[1-2],rack10-n1"},
		{"long digit run stays plain", []string{"n00000000000000000000001", "n1", "n2"}, "n[1-2],n00000000000000000000001"},
		{"nineteen digits ranged", []string{"n9999999999999999998", "n9999999999999999999"}, "n[9999999999999999998-9999999999999999999]"},
		{"multi-dim names", []string{"r1n2", "r1n1", "r2n1"}, "r1n[1-2],r2n1"},
		{"range capped at MaxRange", seq("n", 1, MaxRange+2, 1, ""), "n[1-65536,65537-65538]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := slices.Clone(tt.names)
			got := Compress(tt.names)
			if got != tt.want {
				t.Errorf("Compress(%q) = %q, want %q", head(tt.names), got, tt.want)
			}
			if !slices.Equal(in, tt.names) {
				t.Errorf("Compress modified its input")
			}
			checkRoundTrip(t, tt.names, got)
		})
	}
}

func TestCompressBracketCap(t *testing.T) {
	t.Parallel()
	// Odd numbers only: every name is its own range.
	var names []string
	for i := range compressRangesPerBracket + 10 {
		names = append(names, "n"+fmt.Sprint(2*i+1))
	}
	got := Compress(names)
	if n := strings.Count(got, "["); n != 2 {
		t.Fatalf("want 2 brackets for %d ranges, got %d", len(names), n)
	}
	if !strings.HasSuffix(got, "],n[131073,131075,131077,131079,131081,131083,131085,131087,131089,131091]") {
		t.Errorf("unexpected split: ...%s", got[len(got)-80:])
	}
	checkRoundTrip(t, names, got)
}

// randomNames draws a name set that mixes prefixes, paddings, duplicates,
// names without digits and contiguous runs.
func randomNames(r *rand.Rand) []string {
	prefixes := []string{"n", "gpu", "rack1-n", "rack10-n", "rack2-n", "", "a0b", "x-", "n1x", "login"}
	n := r.IntN(200)
	names := make([]string, 0, n)
	for len(names) < n {
		p := prefixes[r.IntN(len(prefixes))]
		switch r.IntN(10) {
		case 0: // no trailing digits
			names = append(names, p+"z")
		case 1: // duplicate
			if len(names) > 0 {
				names = append(names, names[r.IntN(len(names))])
			}
		case 2, 3: // contiguous run
			start, width := r.IntN(120), r.IntN(4)
			for i := range r.IntN(30) {
				names = append(names, fmt.Sprintf("%s%0*d", p, width, start+i))
			}
		default:
			v := r.IntN(1200)
			if r.IntN(8) == 0 {
				v = r.IntN(10)
			}
			names = append(names, fmt.Sprintf("%s%0*d", p, r.IntN(5), v))
		}
	}
	for i := range names {
		if names[i] == "" {
			names[i] = "0"
		}
	}
	return names
}

func TestCompressRoundTripProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		names := randomNames(r)
		got := Compress(names)
		checkRoundTrip(t, names, got)
		// Deterministic: input order does not matter.
		shuffled := slices.Clone(names)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again := Compress(shuffled); again != got {
			t.Fatalf("Compress depends on order:\n %q\n %q", got, again)
		}
		// Stable: compressing the expansion gives the same expression.
		exp, _ := Expand(got)
		if again := Compress(exp); again != got {
			t.Fatalf("Compress(Expand(c)) != c:\n %q\n %q", got, again)
		}
	}
}

func TestCompressLargeCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Getenv("CI") != "true" { // never skipped in CI
		t.Skip("300k names")
	}
	names := clusterNames(300_000, 7)
	got := Compress(names)
	checkRoundTrip(t, names, got)
	if len(got) > 200_000 {
		t.Errorf("compressed 300k names into %d bytes", len(got))
	}
}

// clusterNames returns n shuffled names gpu000001.. with about 3% missing and
// a few login nodes.
func clusterNames(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 99))
	names := make([]string, 0, n)
	for i := 1; len(names) < n-3; i++ {
		if r.IntN(33) != 0 {
			names = append(names, fmt.Sprintf("gpu%06d", i))
		}
	}
	names = append(names, "login1", "login2", "admin")
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	return names
}

// TestCompressorReuse: one Compressor, given list after list (large and
// small, sharing prefixes or not), appends for each exactly what Compress
// returns for it, after what dst already holds.
func TestCompressorReuse(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var z Compressor
	var buf []byte
	for i := range 2000 {
		names := randomNames(r)
		if i%50 == 0 {
			names = clusterNames(5000, uint64(i))
		}
		want := Compress(names)
		buf = z.Append(append(buf[:0], "x="...), names)
		if got := string(buf); got != "x="+want {
			t.Fatalf("list %d: Append gave %q, Compress %q", i, got, want)
		}
	}
	if got := z.Append([]byte("keep"), nil); string(got) != "keep" {
		t.Fatalf("Append of no names gave %q", got)
	}
}
