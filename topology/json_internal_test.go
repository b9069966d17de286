package topology

import (
	"maps"
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
