package hostlist

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// seq returns prefix+fmt(i, width)+suffix for i in lo..hi.
func seq(prefix string, lo, hi, width int, suffix string) []string {
	var out []string
	for i := lo; i <= hi; i++ {
		out = append(out, fmt.Sprintf("%s%0*d%s", prefix, width, i, suffix))
	}
	return out
}

func cat(parts ...[]string) []string { return slices.Concat(parts...) }

func TestExpand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want []string
	}{
		{"empty", "", nil},
		{"only separators", " ,\t,\n ", nil},
		{"single host", "login1", []string{"login1"}},
		{"plain list", "a1,b2,a2", []string{"a1", "b2", "a2"}},
		{"all separators", "a b\tc\nd,e", []string{"a", "b", "c", "d", "e"}},
		{"repeated separators", ",,a,, ,b,", []string{"a", "b"}},
		{"padded range", "n[01-16]", seq("n", 1, 16, 2, "")},
		{"unpadded range", "n[1-16]", seq("n", 1, 16, 1, "")},
		{"width from low bound", "n[001-1000]", seq("n", 1, 1000, 3, "")},
		{"high bound width ignored", "n[1-010]", seq("n", 1, 10, 1, "")},
		{"padded high bound shorter", "n[08-9]", []string{"n08", "n09"}},
		{"unpadded across widths", "n[9-10]", []string{"n9", "n10"}},
		{"zero", "n[0-2]", []string{"n0", "n1", "n2"}},
		{"zero padded zero", "n[00-01]", []string{"n00", "n01"}},
		{"single number", "n[5]", []string{"n5"}},
		{"single padded number", "n[007]", []string{"n007"}},
		{"several ranges", "n[1-3,5,07-08]", []string{"n1", "n2", "n3", "n5", "n07", "n08"}},
		{"order kept", "n[3,1,2]", []string{"n3", "n1", "n2"}},
		{"duplicates kept", "n[1-2],n1,n[2]", []string{"n1", "n2", "n1", "n2"}},
		{"empty prefix", "[1-3]", []string{"1", "2", "3"}},
		{"suffix", "n[1-2]-ib", []string{"n1-ib", "n2-ib"}},
		{"prefix with digits", "n1[0-2]", []string{"n10", "n11", "n12"}},
		{"cartesian", "rack[1-2]-n[01-04]", cat(seq("rack1-n", 1, 4, 2, ""), seq("rack2-n", 1, 4, 2, ""))},
		{"cartesian with suffix", "r[1-2]n[1-2].ib", []string{"r1n1.ib", "r1n2.ib", "r2n1.ib", "r2n2.ib"}},
		{"cartesian comma ranges", "a[1,3]b[2-3]", []string{"a1b2", "a1b3", "a3b2", "a3b3"}},
		{
			// Slurm nests the groups before the last one right to left.
			"three groups in slurm order", "a[1-2]b[1-2]c[1-2]",
			[]string{"a1b1c1", "a1b1c2", "a2b1c1", "a2b1c2", "a1b2c1", "a1b2c2", "a2b2c1", "a2b2c2"},
		},
		{"commas inside brackets do not split", "n[1,2] m[3,4]", []string{"n1", "n2", "m3", "m4"}},
		{"mixed list", "gpu[001-002],login1 n[9-10]", []string{"gpu001", "gpu002", "login1", "n9", "n10"}},
		{"max range", "n[1-65536]", seq("n", 1, 65536, 1, "")},
		{"large value", "n[18446744073709551613-18446744073709551614]", []string{"n18446744073709551613", "n18446744073709551614"}},
		{"wide padding", "n[0000000000000000000000001-2]", []string{"n0000000000000000000000001", "n0000000000000000000000002"}},
		{"plain long digits kept", "n99999999999999999999999", []string{"n99999999999999999999999"}},
		{"other bytes are literal", "a.b-c_d:e/f\r", []string{"a.b-c_d:e/f\r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Expand(tt.expr)
			if err != nil {
				t.Fatalf("Expand(%q) error: %v", tt.expr, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Expand(%q) =\n %q\nwant\n %q", tt.expr, head(got), head(tt.want))
			}
		})
	}
}

// head shortens long slices in failure messages.
func head(s []string) []string {
	if len(s) > 20 {
		return append(slices.Clip(s[:20]), fmt.Sprintf("... %d more", len(s)-20))
	}
	return s
}

func TestExpandErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		expr     string
		sentinel error
		item     string // the message must quote this item
		detail   string // and contain this text
	}{
		{"unclosed bracket", "a1,n[1-3", ErrSyntax, "n[1-3", "no matching ']'"},
		{"unclosed bracket swallows list", "n[1-2,m3", ErrSyntax, "n[1-2,m3", "no matching ']'"},
		{"stray close bracket", "n1]", ErrSyntax, "n1]", "no matching '['"},
		{"nested bracket", "n[1[2]]", ErrSyntax, "n[1[2]]", "nested '['"},
		{"reversed range", "ok,n[5-3]", ErrSyntax, "n[5-3]", "greater than high bound"},
		{"letter in range", "n[1-a]", ErrSyntax, "n[1-a]", "non-digit"},
		{"box syntax", "n[1x2]", ErrSyntax, "n[1x2]", "non-digit"},
		{"space in range", "n[1, 3]", ErrSyntax, "n[1, 3]", "non-digit"},
		{"plus sign", "n[+1]", ErrSyntax, "n[+1]", "non-digit"},
		{"double dash", "n[1-2-3]", ErrSyntax, "n[1-2-3]", "non-digit"},
		{"negative", "n[-1]", ErrSyntax, "n[-1]", "no low bound"},
		{"missing high bound", "n[1-]", ErrSyntax, "n[1-]", "no high bound"},
		{"empty brackets", "n[]", ErrSyntax, "n[]", "empty brackets"},
		{"empty range trailing", "n[1,]", ErrSyntax, "n[1,]", "empty range"},
		{"empty range leading", "n[,1]", ErrSyntax, "n[,1]", "empty range"},
		{"number too large", "n[18446744073709551616]", ErrSyntax, "n[18446744073709551616]", "too large"},
		{"ulong max", "n[18446744073709551615]", ErrSyntax, "n[18446744073709551615]", "too large"},
		{"range too big", "n[1-65537]", ErrTooMany, "n[1-65537]", "more than 65536"},
		{"range way too big", "n[0-99999999999]", ErrTooMany, "n[0-99999999999]", "more than 65536"},
		{"prefix group too big", "a[1-40000,1-40000]b[1-2]", ErrTooMany, "a[1-40000,1-40000]b[1-2]", "before the last"},
		{"total cap", "a[1-65536]b[1-65536]", ErrTooMany, "a[1-65536]b[1-65536]", "more than 4194304 hosts"},
		{"hostlist function", "block{b1}", ErrUnsupported, "block{b1}", "hostlist functions"},
		{"closing brace", "n1}", ErrUnsupported, "n1}", "hostlist functions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Expand(tt.expr)
			if err == nil {
				t.Fatalf("Expand(%q) = %q, want error", tt.expr, head(got))
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("Expand(%q) error %v does not wrap %v", tt.expr, err, tt.sentinel)
			}
			if msg := err.Error(); !strings.Contains(msg, quote(tt.item)) || !strings.Contains(msg, tt.detail) {
				t.Errorf("Expand(%q) error %q should quote item %q and mention %q", tt.expr, msg, tt.item, tt.detail)
			}
			if got != nil {
				t.Errorf("Expand(%q) returned names with an error", tt.expr)
			}
		})
	}
}

func TestExpandLongItemQuotedShort(t *testing.T) {
	t.Parallel()
	expr := strings.Repeat("x", 10000) + "[1-"
	_, err := Expand(expr)
	if !errors.Is(err, ErrSyntax) {
		t.Fatalf("error %v, want ErrSyntax", err)
	}
	if len(err.Error()) > 300 || !strings.Contains(err.Error(), "10003 bytes") {
		t.Errorf("error message not shortened: %d bytes: %.200q", len(err.Error()), err.Error())
	}
}

func TestExpandByteCap(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 1<<20)
	_, err := Expand(long + "[1-65536]")
	if !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "bytes of names") {
		t.Fatalf("error %v, want ErrTooMany for bytes", err)
	}
	// Within the cap the same shape works.
	got, err := Expand(strings.Repeat("x", 1000) + "[1-100]")
	if err != nil || len(got) != 100 || len(got[99]) != 1003 {
		t.Fatalf("got %d names, err %v", len(got), err)
	}
}

func TestExpandLimitsAreExact(t *testing.T) {
	t.Parallel()
	lim := limits{hosts: 10, bytes: 1000}
	if got, err := expand("n[1-5],m[1-5]", lim); err != nil || len(got) != 10 {
		t.Fatalf("10 hosts at limit 10: %d names, err %v", len(got), err)
	}
	if _, err := expand("n[1-5],m[1-5],x", lim); !errors.Is(err, ErrTooMany) {
		t.Fatalf("11 hosts at limit 10: err %v, want ErrTooMany", err)
	}
	_, err := expand("n[1-5],n[6-10],x1", lim)
	if !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), `item "x1"`) {
		t.Fatalf("cap reached across items: err %v, want ErrTooMany naming x1", err)
	}
	if _, err := expand("n[1-5]", limits{hosts: 10, bytes: 9}); !errors.Is(err, ErrTooMany) {
		t.Fatalf("10 bytes at limit 9: err %v, want ErrTooMany", err)
	}
}

func TestExpandTooManyRangesInBracket(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("1,", MaxRangesPerBracket) + "1"
	_, err := Expand("n[" + body + "]")
	if !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "ranges in one bracket") {
		t.Fatalf("error %v, want ErrTooMany for ranges", err)
	}
}

// refItem expands one valid item the way Slurm's _hostlist_create_bracketed
// and _push_range_list do: split at the last '[', then expand the brackets
// left in the prefix recursively, again from the last one.
func refItem(tok string) []string {
	p := strings.LastIndexByte(tok, '[')
	if p < 0 {
		return []string{tok}
	}
	q := p + strings.IndexByte(tok[p:], ']')
	return refPush(tok[:p], refRanges(tok[p+1:q]), tok[q+1:])
}

func refPush(prefix string, ranges []rng, suffix string) []string {
	var out []string
	if p := strings.LastIndexByte(prefix, '['); p >= 0 {
		q := p + strings.LastIndexByte(prefix[p:], ']')
		for _, r := range refRanges(prefix[p+1 : q]) {
			for j := r.lo; j <= r.hi; j++ {
				out = append(out, refPush(fmt.Sprintf("%s%0*d%s", prefix[:p], r.width, j, prefix[q+1:]), ranges, suffix)...)
			}
		}
		return out
	}
	for _, r := range ranges {
		for v := r.lo; v <= r.hi; v++ {
			out = append(out, fmt.Sprintf("%s%0*d%s", prefix, r.width, v, suffix))
		}
	}
	return out
}

func refRanges(body string) []rng {
	var out []rng
	for _, part := range strings.Split(body, ",") {
		lo, hi, _ := strings.Cut(part, "-")
		if hi == "" {
			hi = lo
		}
		l, _ := strconv.ParseUint(lo, 10, 64)
		h, _ := strconv.ParseUint(hi, 10, 64)
		out = append(out, rng{lo: l, hi: h, width: len(lo)})
	}
	return out
}

// TestExpandMatchesSlurmAlgorithm compares Expand with refItem on random
// well-formed expressions.
func TestExpandMatchesSlurmAlgorithm(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	lit := func() string { return []string{"", "n", "rack", "-", ".ib", "x1", "0"}[r.IntN(7)] }
	num := func(v int) string { return fmt.Sprintf("%0*d", r.IntN(4), v) }
	for range 2000 {
		var items []string
		for range 1 + r.IntN(3) {
			var b strings.Builder
			b.WriteString(lit())
			for range r.IntN(4) {
				b.WriteByte('[')
				for k := range 1 + r.IntN(3) {
					if k > 0 {
						b.WriteByte(',')
					}
					lo := r.IntN(120)
					b.WriteString(num(lo))
					if r.IntN(2) == 0 {
						b.WriteString("-" + num(lo+r.IntN(12)))
					}
				}
				b.WriteByte(']')
				b.WriteString(lit())
			}
			if b.Len() == 0 {
				b.WriteString("h")
			}
			items = append(items, b.String())
		}
		var want []string
		for _, it := range items {
			want = append(want, refItem(it)...)
		}
		expr := strings.Join(items, ",")
		got, err := Expand(expr)
		if err != nil {
			t.Fatalf("Expand(%q): %v", expr, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Expand(%q) =\n %q\nSlurm's algorithm gives\n %q", expr, head(got), head(want))
		}
		checkRoundTrip(t, got, Compress(got))
	}
}

// TestExpanderReuse: one Expander, given expression after expression
// (valid or not, large or small), returns for each exactly what Expand
// returns, and earlier results are not changed by later calls.
func TestExpanderReuse(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	var x Expander
	var kept [][]string
	var exprs []string
	for i := range 1500 {
		expr := Compress(randomNames(r))
		switch i % 7 {
		case 3:
			expr += ",bad[1-"
		case 5:
			expr = "a[1-3]b[01-02]," + expr
		}
		want, wantErr := Expand(expr)
		got, err := x.Expand(expr)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("%q: error %v, Expand's %v", expr, err, wantErr)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: %d names, Expand gave %d", expr, len(got), len(want))
		}
		kept, exprs = append(kept, got), append(exprs, expr)
	}
	for i, names := range kept {
		if want, _ := Expand(exprs[i]); !slices.Equal(names, want) {
			t.Fatalf("the names of %q changed after later calls", exprs[i])
		}
	}
}
