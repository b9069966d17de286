package topology

import (
	"maps"
	"strings"
	"testing"
)

// TestTopLevelArrayLens: the counts that size the decoded slices, with
// brackets, commas and quotes inside strings and nested values.
func TestTopLevelArrayLens(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want map[string]int
	}{
		{`{"nodes":[],"switches":[ ],"domains":null}`, map[string]int{"nodes": 0, "switches": 0}},
		{`{"nodes":[{"name":"a"},{"name":"b"}]}`, map[string]int{"nodes": 2}},
		{` { "nodes" : [ {"name":"a,]\"[{"} , {"attributes":{"x":"1","y":"2"}} , {"n":[1,2,3]} ] } `, map[string]int{"nodes": 3}},
		{`{"a":"[,]","b":[1],"c":{"d":[1,2]},"e":["x","y,z"]}`, map[string]int{"b": 1, "e": 2}},
		{`{"nodes":[1,2`, map[string]int{}},
		{`[1,2,3]`, map[string]int{}},
	} {
		if got := topLevelArrayLens([]byte(tt.in)); !maps.Equal(got, tt.want) {
			t.Errorf("topLevelArrayLens(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestPresizeBounded: elements far smaller than any real node do not
// make a table larger than a real graph of the same size would.
func TestPresizeBounded(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"nodes":[` + strings.Repeat("1,", 99999) + `1]}`)
	n := topLevelArrayLens(doc)["nodes"]
	if n != 100000 {
		t.Fatalf("counted %d elements, want 100000", n)
	}
	if got := presize(n, len(doc)); got > len(doc)/minItemJSON || got >= n {
		t.Errorf("presize(%d, %d) = %d, want at most %d", n, len(doc), got, len(doc)/minItemJSON)
	}
	if got := presize(3, 1000); got != 3 {
		t.Errorf("presize(3, 1000) = %d, want 3", got)
	}
}
