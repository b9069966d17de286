package topology

import (
	"errors"
	"testing"
)

func sw(ids ...string) []SwitchInfo {
	out := make([]SwitchInfo, len(ids))
	for i, id := range ids {
		out[i] = SwitchInfo{ID: id}
	}
	return out
}

// TestTryAddPath: each way one more path could make the graph
// unbuildable is refused with Build's sentinel, and the refused path
// leaves no trace: Build succeeds and the node is placed nowhere.
func TestTryAddPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path []SwitchInfo
		want error
	}{
		{"fits", sw("leaf2", "spine1"), nil},
		{"safe name of another switch", sw("leaf/1", "spine1"), nil}, // "leaf-1-<hash>": no collision with leaf1
		{"sanitized twin", sw(SafeName("leaf#1"), "spine1"), ErrNameCollision},
		{"named like a node", sw("n2", "spine1"), ErrNameCollision},
		{"second parent", sw("leaf1", "spine2"), ErrTwoParents},
		{"nodes under a spine", sw("spine1"), ErrMixedSwitch},
		{"a leaf above a leaf", sw("leaf9", "leaf1", "spine1"), ErrMixedSwitch},
		{"cycle through a known switch", sw("leafx", "core1", "spine1"), ErrCycle},
		{"repeated in the path", sw("leafy", "spiney", "leafy"), ErrCycle},
		{"empty ID", sw("", "spine1"), ErrEmptyName},
		{"other data", []SwitchInfo{{ID: "leaf1", LinkSpeedGbps: 400}, {ID: "spine1"}}, ErrDuplicateSwitch},
		{"two new names alike", sw("a#b", "a b"), nil}, // different hashes: both fine
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBuilder()
			for _, n := range []string{"n1", "n2", "n3"} {
				b.AddNode(Node{Name: n})
			}
			b.AddPath("n1", sw("leaf1", "spine1", "core1"))
			b.AddSwitch(SwitchInfo{ID: "leaf#1"})
			b.Link("spine1", "leaf#1")
			err := b.TryAddPath("n3", tc.path)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("TryAddPath = %v, want %v", err, tc.want)
			}
			g, berr := b.Build()
			if berr != nil {
				t.Fatalf("Build after TryAddPath: %v", berr)
			}
			n, _ := g.Node("n3")
			if placed := n.Leaf != ""; placed != (tc.want == nil) {
				t.Errorf("n3 leaf = %q after TryAddPath = %v", n.Leaf, err)
			}
		})
	}
}

func TestTryAddPathPlacedNode(t *testing.T) {
	t.Parallel()
	b := NewBuilder()
	b.AddNode(Node{Name: "n1"})
	if err := b.TryAddPath("n1", sw("leaf1")); err != nil {
		t.Fatal(err)
	}
	if err := b.TryAddPath("n1", sw("leaf2")); !errors.Is(err, ErrTwoLeaves) {
		t.Errorf("second leaf = %v, want ErrTwoLeaves", err)
	}
	if err := b.TryAddPath("ghost", sw("leaf1")); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("undeclared node = %v, want ErrUnknownNode", err)
	}
}

// TestTryAddToDomain: a domain whose safe name another domain has, a
// sub-domain in two domains, a node in two domains and an empty domain
// are refused and leave no trace.
func TestTryAddToDomain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		domain, sub string
		want        error
	}{
		{"fits", "dom2", "rack9", nil},
		{"same domain and rack", "dom/1", "rack1", nil},
		{"sanitized twin", SafeName("dom/1"), "", ErrNameCollision},
		{"rack of another domain", "dom2", "rack1", ErrSubDomain},
		{"empty", "", "", ErrEmptyName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBuilder()
			b.AddNode(Node{Name: "n1"})
			b.AddNode(Node{Name: "n2"})
			b.AddToDomain("n1", "dom/1", "rack1")
			err := b.TryAddToDomain("n2", tc.domain, tc.sub)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("TryAddToDomain = %v, want %v", err, tc.want)
			}
			g, berr := b.Build()
			if berr != nil {
				t.Fatalf("Build after TryAddToDomain: %v", berr)
			}
			n, _ := g.Node("n2")
			if in := n.Domain != ""; in != (tc.want == nil) {
				t.Errorf("n2 domain = %q after TryAddToDomain = %v", n.Domain, err)
			}
		})
	}
	b := NewBuilder()
	b.AddNode(Node{Name: "n1"})
	b.AddToDomain("n1", "a", "")
	if err := b.TryAddToDomain("n1", "b", ""); !errors.Is(err, ErrTwoDomains) {
		t.Errorf("second domain = %v, want ErrTwoDomains", err)
	}
}
