package hostlist

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestLess(t *testing.T) {
	t.Parallel()
	// Each pair must satisfy a < b.
	tests := []struct{ a, b string }{
		{"n2", "n10"},
		{"gpu001", "gpu002"},
		{"n1", "n01"},
		{"n01", "n2"},
		{"n9", "n10"},
		{"n099", "n100"},
		{"n", "n0"},
		{"a9", "b1"},
		{"n5", "n3x"}, // prefix "n" before prefix "n3x"
		{"rack2-n9", "rack10-n1"},
		{"rack1-n2", "rack1x"},
		{"a1b2", "a01b1"},
		{"", "a"},
		{"1", "2"},
		{"99999999999999999999998", "99999999999999999999999"},
		{"n99999999999999999999", "n100000000000000000000"},
		{"n0000000000000000000001", "n2"},
		{"N1", "n1"},
		{"n1", "n-1"}, // prefix "n" runs out before "n-"
	}
	for _, tt := range tests {
		if !Less(tt.a, tt.b) || Less(tt.b, tt.a) {
			t.Errorf("want %q < %q: Less = %v, reverse = %v", tt.a, tt.b, Less(tt.a, tt.b), Less(tt.b, tt.a))
		}
		if Compare(tt.a, tt.b) != -1 || Compare(tt.b, tt.a) != 1 {
			t.Errorf("Compare(%q, %q) = %d, reverse %d", tt.a, tt.b, Compare(tt.a, tt.b), Compare(tt.b, tt.a))
		}
	}
	for _, s := range []string{"", "n1", "n01", "a0b0", "x"} {
		if Compare(s, s) != 0 || Less(s, s) {
			t.Errorf("Compare(%q, %q) = %d", s, s, Compare(s, s))
		}
	}
}

func TestSort(t *testing.T) {
	t.Parallel()
	got := []string{"n10", "n2", "login", "n01", "n1", "gpu002", "gpu001", "rack10-n1", "rack2-n1"}
	Sort(got)
	want := []string{"gpu001", "gpu002", "login", "n1", "n01", "n2", "n10", "rack2-n1", "rack10-n1"}
	if !slices.Equal(got, want) {
		t.Errorf("Sort = %q, want %q", got, want)
	}
}

// TestCompareTotalOrder checks antisymmetry, transitivity and that only equal
// strings compare equal, on random strings over a small alphabet.
func TestCompareTotalOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0019ab-"
	randStr := func() string {
		var b strings.Builder
		for range r.IntN(7) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 200_000 {
		a, b, c := randStr(), randStr(), randStr()
		ab, ba := Compare(a, b), Compare(b, a)
		if ab != -ba {
			t.Fatalf("Compare(%q,%q)=%d but reverse %d", a, b, ab, ba)
		}
		if (ab == 0) != (a == b) {
			t.Fatalf("Compare(%q,%q)=%d", a, b, ab)
		}
		if ab < 0 && Compare(b, c) < 0 && Compare(a, c) >= 0 {
			t.Fatalf("not transitive: %q < %q < %q but Compare(a,c)=%d", a, b, c, Compare(a, c))
		}
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	valid := []string{"n1", "gpu001", "login", "a.b-c_d", "1", "rack1-n01", "n18446744073709551614",
		"n00000000000000000000000018446744073709551614", "ünï"}
	for _, s := range valid {
		if err := ValidName(s); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", s, err)
		}
	}
	invalid := []struct{ name, why string }{
		{"", "empty"},
		{"a,b", "hostlist syntax"},
		{"n[1]", "hostlist syntax"},
		{"n]", "hostlist syntax"},
		{"a b", "hostlist syntax"},
		{"a\tb", "hostlist syntax"},
		{"a\nb", "hostlist syntax"},
		{"block{b}", "hostlist functions"},
		{"a\rb", "control character"},
		{"a\x00", "control character"},
		{"a\x7f", "control character"},
		{"n18446744073709551615", "2^64-1"},
		{"n99999999999999999999999", "2^64-1"},
	}
	for _, tt := range invalid {
		err := ValidName(tt.name)
		if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("ValidName(%q) = %v, want ErrInvalidName mentioning %q", tt.name, err, tt.why)
		}
		if tt.name != "" && !strings.Contains(err.Error(), quote(tt.name)) {
			t.Errorf("ValidName(%q) = %v does not quote the name", tt.name, err)
		}
	}
}

// TestValidNamesExpandToThemselves ties ValidName to Expand.
func TestValidNamesExpandToThemselves(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"n1", "x.y", "[", "a]", "a{", "a b", "n01"} {
		got, err := Expand(s)
		ok := err == nil && len(got) == 1 && got[0] == s
		if valid := ValidName(s) == nil; valid && !ok {
			t.Errorf("valid name %q expands to %q, %v", s, got, err)
		}
	}
}
