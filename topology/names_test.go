package topology_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

func TestSafeName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id, want string
	}{
		{"leaf01", "leaf01"},
		{"S-2c5eab0300b87b40", "S-2c5eab0300b87b40"},
		{"nn-1234_abc", "nn-1234_abc"},
	}
	for _, tt := range tests {
		if got := topology.SafeName(tt.id); got != tt.want {
			t.Errorf("SafeName(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestSafeNameSanitizes(t *testing.T) {
	t.Parallel()
	ids := []string{
		"switch.1.1", "a,b", "a[1]", "x{y}", "host:port", "with space", "tab\tnl\n",
		"cluster/block/subblock", "-leading", strings.Repeat("long", 30), "...", "#comment", "k=v",
		"ünïcode", "",
	}
	seen := map[string]string{}
	for _, id := range ids {
		got := topology.SafeName(id)
		if len(got) == 0 || len(got) > topology.MaxNameLen {
			t.Errorf("SafeName(%q) = %q: bad length %d", id, got, len(got))
		}
		if strings.ContainsAny(got, ",[]{}:.#= \t\n") {
			t.Errorf("SafeName(%q) = %q contains an unsafe character", id, got)
		}
		if got != topology.SafeName(id) {
			t.Errorf("SafeName(%q) is not stable", id)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("SafeName(%q) = SafeName(%q) = %q", id, other, got)
		}
		seen[got] = id
	}
	// Readable prefix kept.
	if got := topology.SafeName("switch.1.1"); !strings.HasPrefix(got, "switch-1-1-") {
		t.Errorf("SafeName(switch.1.1) = %q, want readable prefix", got)
	}
	if got := topology.SafeName(strings.Repeat("a", 65)); len(got) != topology.MaxNameLen {
		t.Errorf("long id -> %q (%d chars)", got, len(got))
	}
}

func TestCheckNodeName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"gpu001", "node-1.example.com", "a_b"} {
		if err := topology.CheckNodeName(ok); err != nil {
			t.Errorf("CheckNodeName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a,b", "a[1]", "a:b", "a{b"} {
		err := topology.CheckNodeName(bad)
		if err == nil {
			t.Errorf("CheckNodeName(%q) = nil", bad)
			continue
		}
		if !errors.Is(err, topology.ErrInvalidName) && !errors.Is(err, topology.ErrEmptyName) {
			t.Errorf("CheckNodeName(%q) = %v, not a sentinel", bad, err)
		}
	}
}
