package fabric

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestChooseLeaves: hosts whose end points are under leaf groups that
// cannot be merged are each placed under one by the same rule, and every
// choice is listed; without ChooseLeaves the same fabric is refused.
func TestChooseLeaves(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		spec   spec
		want   string // the tree (render)
		chosen string
	}{
		{"a storage leaf every host shares: each host's own leaf",
			spec{links: []string{"l1-s1", "l2-s1", "st-s1"}, hosts: []string{"l1:h1,h2", "l2:h3,h4", "st:h1,h2,h3,h4"}},
			"l1 L0 ^s1 [l1] h1,h2\nl2 L0 ^s1 [l2] h3,h4\ns1 L1 ^ [s1]\n",
			"h1 under l1 (not st); h2 under l1 (not st); h3 under l2 (not st); h4 under l2 (not st)"},
		// b1 (a subset of a1) and a2 (of b2) join those groups first; h3,
		// one end point in each group, goes to the group with fewer hosts.
		{"two rails whose leaves carry different hosts: fewer hosts on a tie",
			spec{links: []string{"a1-s1", "a2-s1", "b1-s1", "b2-s1"},
				hosts: []string{"a1:h1,h2,h3", "a2:h4", "b1:h1,h2", "b2:h3,h4"}},
			"a1 L0 ^s1 [a1 b1] h1,h2\na2 L0 ^s1 [a2 b2] h3,h4\ns1 L1 ^ [s1]\n",
			"h3 under a2 (not a1)"},
		{"most end points first",
			spec{links: []string{"a1-s1", "b1-s1"}, hosts: []string{"a1:h1,h2", "b1:h2,h2,h3"}},
			"b1 L0 ^s1 [b1] h2,h3\na1 L0 ^s1 [a1] h1\ns1 L1 ^ [s1]\n", // leaves with more hosts first
			"h2 under b1 (not a1)"},
		{"rails with the same hosts need no choice",
			spec{links: []string{"a1-s1", "b1-s1", "a2-s1", "b2-s1"}, hosts: []string{"a1:h1,h2", "b1:h1,h2", "a2:h3", "b2:h3"}},
			"a1 L0 ^s1 [a1 b1] h1,h2\na2 L0 ^s1 [a2 b2] h3\ns1 L1 ^ [s1]\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := tc.spec.build(t)
			if _, err := f.Reduce(); tc.chosen != "" && !errors.Is(err, ErrAmbiguousLeaf) {
				t.Fatalf("without ChooseLeaves: %v, want ErrAmbiguousLeaf", err)
			}
			f.ChooseLeaves()
			tree, err := f.Reduce()
			if err != nil {
				t.Fatal(err)
			}
			if got := render(tree); got != tc.want {
				t.Errorf("tree:\n%s\nwant:\n%s", got, tc.want)
			}
			var chosen []string
			for _, c := range tree.Chosen() {
				chosen = append(chosen, fmt.Sprintf("%s under %s (not %s)", c.Host, c.Leaf, strings.Join(c.Others, ", ")))
			}
			if got := strings.Join(chosen, "; "); got != tc.chosen {
				t.Errorf("chosen = %q, want %q", got, tc.chosen)
			}
		})
	}
}
