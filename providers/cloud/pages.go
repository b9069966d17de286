package cloud

import (
	"errors"
	"fmt"
)

// ErrRepeatedToken is wrapped when an API hands out a page token it gave
// before: reading on would loop.
var ErrRepeatedToken = errors.New("repeated page token")

// Pages reads a token-paged list: page(n, token) fetches page n (from 1)
// with the token the page before gave ("" for the first) and returns the
// next token, "" after the last page. A token given twice wraps
// ErrRepeatedToken, more than MaxPages pages is an error, and an error of
// page is returned as it is. Pages returns the pages asked for.
func Pages(page func(n int, token string) (next string, err error)) (int, error) {
	seen := map[string]bool{}
	tok := ""
	for n := 1; n <= MaxPages; n++ {
		next, err := page(n, tok)
		if err != nil {
			return n, err
		}
		if next == "" {
			return n, nil
		}
		if seen[next] {
			return n, fmt.Errorf("page %d: %w", n, ErrRepeatedToken)
		}
		seen[next] = true
		tok = next
	}
	return MaxPages, fmt.Errorf("more than %d pages", MaxPages)
}
