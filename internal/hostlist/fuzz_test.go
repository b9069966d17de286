package hostlist

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"", "n1", "n[01-16]", "n[1-16]", "n[001-1000]", "rack[1-2]-n[01-04]", "a[1-2]b[1-2]c[1-2]",
		"n[1-2]-ib", "a1,b2 a2\tc\n", "n[1-3,5,07-08]", "[0-9]", "n[9-10]", "n[1", "n1]", "n[1[2]]",
		"n[5-3]", "n[a]", "n[]", "n[1,]", "n[-1]", "n[1-65537]", "block{b1}", "n[18446744073709551614]",
		"x[0000000000000000000000001-3]y", "n[1-2],n1",
	} {
		f.Add(s)
	}
	// Lower caps keep each execution small; the cap logic is the same.
	lim := limits{hosts: 1 << 16, bytes: 1 << 22}
	f.Fuzz(func(t *testing.T, expr string) {
		got, err := expand(expr, lim)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrTooMany) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Expand(%q) error %v wraps no sentinel", expr, err)
			}
			if got != nil {
				t.Fatalf("Expand(%q) returned names with an error", expr)
			}
			return
		}
		for _, n := range got {
			if n == "" || strings.ContainsAny(n, ",[]{} \t\n") {
				t.Fatalf("Expand(%q) produced name %q", expr, n)
			}
		}
		c := Compress(got)
		back, err := Expand(c)
		if err != nil {
			t.Fatalf("Expand(Compress(Expand(%q))) = Expand(%q) error %v", expr, c, err)
		}
		Sort(back)
		if want := sortUnique(got); !slices.Equal(back, want) {
			t.Fatalf("round trip of %q via %q:\n got  %q\n want %q", expr, c, head(back), head(want))
		}
	})
}

func FuzzCompressRoundTrip(f *testing.F) {
	for _, s := range []string{
		"n1\x00n2\x00n3", "n01\x00n1\x00n2\x00n02", "a1\x00b2\x00a2", "gpu001\x00gpu100\x00gpu099",
		"login\x00login\x00n", "n9\x00n10\x00n010", "0\x0000\x00000", "r1n1\x00r1n2\x00r10n1",
		"n99999999999999999999\x00n1", "x-\x00x-1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		// NUL is a control character, so it never occurs in a valid name.
		names := slices.DeleteFunc(strings.Split(data, "\x00"), func(s string) bool { return ValidName(s) != nil })
		c := Compress(names)
		got, err := Expand(c)
		if err != nil {
			t.Fatalf("Expand(Compress(%q)) = Expand(%q) error %v", names, c, err)
		}
		Sort(got)
		if want := sortUnique(names); !slices.Equal(got, want) {
			t.Fatalf("round trip of %q via %q:\n got  %q\n want %q", names, c, got, want)
		}
		slices.Reverse(names)
		if again := Compress(names); again != c {
			t.Fatalf("Compress depends on input order: %q vs %q", c, again)
		}
	})
}
