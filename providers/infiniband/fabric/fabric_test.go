package fabric

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// spec is a small fabric: links "a-b" or "a-b@speed", hosts "switch:h1,h2",
// foreign switch IDs.
type spec struct {
	links   []string
	hosts   []string
	foreign []string
}

func (s spec) build(t *testing.T) *Fabric {
	t.Helper()
	f := New()
	for _, l := range s.links {
		pair, speed, _ := strings.Cut(l, "@")
		a, b, ok := strings.Cut(pair, "-")
		if !ok {
			t.Fatalf("bad link %q", l)
		}
		gbps, _ := strconv.Atoi(speed)
		f.Link(a, b, uint32(gbps))
	}
	for _, h := range s.hosts {
		sw, list, _ := strings.Cut(h, ":")
		f.AddSwitch(sw, "name-"+sw)
		for _, host := range strings.Split(list, ",") {
			f.AttachHost(sw, host)
		}
	}
	for _, sw := range s.foreign {
		f.MarkForeign(sw, "storage")
	}
	return f
}

// render prints a tree one group a line: "ID L<level> ^parent [members] hosts @uplink".
func render(t *Tree) string {
	var b strings.Builder
	for _, g := range t.Groups() {
		fmt.Fprintf(&b, "%s L%d ^%s %v", g.ID, g.Level, g.Parent, g.Members)
		if len(g.Hosts) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(g.Hosts, ","))
		}
		if g.UplinkGbps > 0 {
			fmt.Fprintf(&b, " @%d", g.UplinkGbps)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReduce(t *testing.T) {
	t.Parallel()
	fatTree2 := []string{"s1-l1", "s1-l2", "s1-l3", "s2-l1", "s2-l2", "s2-l3"}
	hosts3 := []string{"l1:n1,n2", "l2:n3,n4", "l3:n5"}
	tests := []struct {
		name      string
		spec      spec
		want      string
		excluded  []string
		unreached []string
	}{
		{
			name: "single leaf",
			spec: spec{hosts: []string{"l1:n2,n1,n10"}},
			want: "l1 L0 ^ [l1] n1,n2,n10\n",
		},
		{
			name: "two-tier fat tree, redundant spines collapse",
			spec: spec{links: fatTree2, hosts: hosts3},
			want: "l1 L0 ^s1 [l1] n1,n2\nl2 L0 ^s1 [l2] n3,n4\nl3 L0 ^s1 [l3] n5\ns1 L1 ^ [s1 s2]\n",
		},
		{
			name: "missing spine cable still collapses",
			spec: spec{links: []string{"s1-l1", "s1-l2", "s1-l3", "s2-l1", "s2-l3"}, hosts: hosts3},
			want: "l1 L0 ^s1 [l1] n1,n2\nl2 L0 ^s1 [l2] n3,n4\nl3 L0 ^s1 [l3] n5\ns1 L1 ^ [s1 s2]\n",
		},
		{
			name: "three tiers, pods and planes",
			spec: spec{
				links: []string{
					"p1s1-l1", "p1s1-l2", "p1s2-l1", "p1s2-l2",
					"p2s1-l3", "p2s1-l4", "p2s2-l3", "p2s2-l4",
					"c1-p1s1", "c1-p2s1", "c2-p1s2", "c2-p2s2",
				},
				hosts: []string{"l1:a1", "l2:a2", "l3:b1", "l4:b2"},
			},
			want: "l1 L0 ^p1s1 [l1] a1\nl2 L0 ^p1s1 [l2] a2\nl3 L0 ^p2s1 [l3] b1\nl4 L0 ^p2s1 [l4] b2\n" +
				"p1s1 L1 ^c1 [p1s1 p1s2]\np2s1 L1 ^c1 [p2s1 p2s2]\nc1 L2 ^ [c1 c2]\n",
		},
		{
			name: "rails: one leaf per HCA of the same hosts",
			spec: spec{
				links: []string{"s1-r0a", "s1-r1a", "s1-r0b", "s1-r1b"},
				hosts: []string{"r0a:n1,n2", "r1a:n1,n2", "r0b:n3,n4", "r1b:n3,n4"},
			},
			want: "r0a L0 ^s1 [r0a r1a] n1,n2\nr0b L0 ^s1 [r0b r1b] n3,n4\ns1 L1 ^ [s1]\n",
		},
		{
			name: "rail with a missing host cable joins its superset",
			spec: spec{
				links: []string{"s1-r0a", "s1-r1a"},
				hosts: []string{"r0a:n1,n2", "r1a:n1"},
			},
			want: "r0a L0 ^s1 [r0a r1a] n1,n2\ns1 L1 ^ [s1]\n",
		},
		{
			name: "two spines each missing a different cable still collapse",
			spec: spec{links: []string{"s1-l1", "s1-l2", "s1-l3", "s2-l1", "s2-l3", "s3-l1", "s3-l2"}, hosts: hosts3},
			want: "l1 L0 ^s1 [l1] n1,n2\nl2 L0 ^s1 [l2] n3,n4\nl3 L0 ^s1 [l3] n5\ns1 L1 ^ [s1 s2 s3]\n",
		},
		{
			name: "link speeds: fastest uplink of a group",
			spec: spec{links: []string{"s1-l1@200", "s2-l1@400", "s1-l2@100", "s2-l2@100"}, hosts: []string{"l1:n1", "l2:n2"}},
			want: "l1 L0 ^s1 [l1] n1 @400\nl2 L0 ^s1 [l2] n2 @100\ns1 L1 ^ [s1 s2]\n",
		},
		{
			name: "foreign storage leaf under the spines is left out",
			spec: spec{
				links:   append(slices.Clone(fatTree2), "s1-st1", "s2-st1", "st1-stspine"),
				hosts:   hosts3,
				foreign: []string{"st1"},
			},
			want:      "l1 L0 ^s1 [l1] n1,n2\nl2 L0 ^s1 [l2] n3,n4\nl3 L0 ^s1 [l3] n5\ns1 L1 ^ [s1 s2]\n",
			excluded:  []string{"st1"},
			unreached: []string{"stspine"},
		},
		{
			name: "lateral cables between spines are ignored",
			spec: spec{links: append(slices.Clone(fatTree2), "s1-s2", "l1-l2"), hosts: hosts3},
			want: "l1 L0 ^s1 [l1] n1,n2\nl2 L0 ^s1 [l2] n3,n4\nl3 L0 ^s1 [l3] n5\ns1 L1 ^ [s1 s2]\n",
		},
		{
			name: "two disjoint fabrics give two roots",
			spec: spec{links: []string{"a-l1", "b-l2"}, hosts: []string{"l1:n1", "l2:n2"}},
			want: "l1 L0 ^a [l1] n1\nl2 L0 ^b [l2] n2\na L1 ^ [a]\nb L1 ^ [b]\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tree, err := tt.spec.build(t).Reduce()
			if err != nil {
				t.Fatal(err)
			}
			if got := render(tree); got != tt.want {
				t.Errorf("tree:\n%s\nwant:\n%s", got, tt.want)
			}
			if !slices.Equal(tree.Excluded(), tt.excluded) || !slices.Equal(tree.Unreached(), tt.unreached) {
				t.Errorf("excluded %v unreached %v, want %v %v", tree.Excluded(), tree.Unreached(), tt.excluded, tt.unreached)
			}
		})
	}
}

func TestReduceErrors(t *testing.T) {
	t.Parallel()
	hosts3 := []string{"l1:n1,n2", "l2:n3,n4", "l3:n5"}
	tests := []struct {
		name  string
		spec  spec
		want  error
		texts []string
	}{
		{"no host", spec{links: []string{"a-b"}}, ErrNoLeaves, nil},
		{
			"loop that cannot be reduced",
			spec{links: []string{"a-l1", "a-l2", "b-l2", "b-l3"}, hosts: []string{"l1:n1", "l2:n2", "l3:n3"}},
			ErrNotATree,
			[]string{`switches [l2 (name-l2)] (level 0) have uplinks to [a] and [b]`},
		},
		{
			"degraded spines that share no leaf",
			spec{links: []string{"s1-l1", "s1-l2", "s1-l3", "s2-l1", "s3-l3"}, hosts: hosts3},
			ErrNotATree,
			[]string{"have uplinks to"},
		},
		{
			"a storage leaf shared by the hosts of two leaves",
			spec{links: []string{"s-l1", "s-l2", "s-st"}, hosts: []string{"l1:n1,n2", "l2:n3,n4", "st:n1,n2,n3,n4"}},
			ErrAmbiguousLeaf,
			[]string{`host "n1" is under leaf switches`},
		},
		{
			"host under two leaves that differ",
			spec{links: []string{"s-l1", "s-l2"}, hosts: []string{"l1:n1,n2", "l2:n1,n3"}},
			ErrAmbiguousLeaf,
			[]string{`host "n1" is under leaf switches [l1 (name-l1)] and [l2 (name-l2)]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.spec.build(t).Reduce()
			if !errors.Is(err, tt.want) {
				t.Fatalf("Reduce() = %v, want %v", err, tt.want)
			}
			for _, text := range tt.texts {
				if !strings.Contains(err.Error(), text) {
					t.Errorf("error %q lacks %q", err, text)
				}
			}
		})
	}
}

func TestReduceManyConflictsAreCapped(t *testing.T) {
	t.Parallel()
	f := New()
	for i := range 30 {
		h := fmt.Sprintf("n%d", i)
		f.AttachHost("l1", h)
		f.AttachHost(fmt.Sprintf("x%d", i), h)
		f.AttachHost(fmt.Sprintf("x%d", i), fmt.Sprintf("m%d", i))
	}
	_, err := f.Reduce()
	if !errors.Is(err, ErrAmbiguousLeaf) || !strings.Contains(err.Error(), "and 20 more hosts") {
		t.Fatalf("error = %v", err)
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	f := spec{links: []string{"s1-l1@400", "s2-l1@400", "c-s1@800", "c-s2@800"}, hosts: []string{"l1:n1"}}.build(t)
	f.AddSwitch("s1", "SPINE-1")
	tree, err := f.Reduce()
	if err != nil {
		t.Fatal(err)
	}
	got := tree.Path("n1")
	if len(got) != 3 || got[0].ID != "l1" || got[0].LinkSpeedGbps != 400 || got[1].ID != "s1" ||
		got[1].DisplayName != "SPINE-1 (+1)" || got[1].LinkSpeedGbps != 800 || got[2].ID != "c" || got[2].LinkSpeedGbps != 0 {
		t.Errorf("Path(n1) = %+v", got)
	}
	if tree.Path("nope") != nil {
		t.Error("Path(unknown) is not nil")
	}
	if !slices.Equal(tree.Hosts(), []string{"n1"}) {
		t.Errorf("Hosts() = %v", tree.Hosts())
	}
}
