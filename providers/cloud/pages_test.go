package cloud_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/toposcope/toposcope/providers/cloud"
)

// TestPages: the tokens are passed on page after page until one is
// empty; a token seen before stops with ErrRepeatedToken; a page's error
// is returned as it is, with the pages asked for so far.
func TestPages(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		next   func(n int) (string, error)
		pages  int
		wantIs error
	}{
		{"three pages", func(n int) (string, error) {
			if n < 3 {
				return "t" + strconv.Itoa(n), nil
			}
			return "", nil
		}, 3, nil},
		{"repeated token", func(n int) (string, error) { return "same", nil }, 2, cloud.ErrRepeatedToken},
		{"page error", func(n int) (string, error) {
			if n == 2 {
				return "", boom
			}
			return "t", nil
		}, 2, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			n, err := cloud.Pages(func(n int, tok string) (string, error) {
				got = append(got, tok)
				return tc.next(n)
			})
			if n != tc.pages || !errors.Is(err, tc.wantIs) || (tc.wantIs == nil) != (err == nil) {
				t.Fatalf("pages %d, err %v; want %d, %v", n, err, tc.pages, tc.wantIs)
			}
			if got[0] != "" || tc.name == "three pages" && (got[1] != "t1" || got[2] != "t2") {
				t.Errorf("tokens passed: %q", got)
			}
		})
	}
}
