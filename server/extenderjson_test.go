package server

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/toposcope/toposcope/service/extender"
)

// TestExtenderAnswerEncoding: the extender's own encoders write what
// encoding/json writes for the same answer (byte for byte when the
// call's names are in sorted order, as encoding/json sorts map keys),
// escaping included, and keep the call's order otherwise.
func TestExtenderAnswerEncoding(t *testing.T) {
	sorted := []string{"a-1", "a-2", "b<&>", "c\"q", "d\\e", "tab\t", "é"} // in byte order
	failed := map[string]string{"a-2": "full", "b<&>": "held <elsewhere> & \"quoted\"", "é": "full", "tab\t": "ünïcode\u2028"}
	keep := []string{"a-1", "c\"q", "d\\e"}
	tests := []struct {
		name  string
		res   *extender.FilterResult
		names []string
	}{
		{"kept only", &extender.FilterResult{NodeNames: &keep}, sorted},
		{"kept none", &extender.FilterResult{NodeNames: &[]string{}, FailedNodes: failed}, sorted},
		{"unresolvable", &extender.FilterResult{NodeNames: &keep, FailedAndUnresolvableNodes: failed}, sorted},
		{"error", &extender.FilterResult{Error: "pod x: bad <annotation>"}, nil},
		{"empty", &extender.FilterResult{}, nil},
		{"keys not among the names follow, sorted", &extender.FilterResult{FailedNodes: failed}, []string{"zz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.res)
			if err != nil {
				t.Fatal(err)
			}
			got := appendFilterResult(nil, tt.res, tt.names)
			if string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	t.Run("call order", func(t *testing.T) {
		order := []string{"tab\t", "a-2", "é", "b<&>"}
		want := `{"FailedNodes":{`
		for i, k := range order {
			kj, _ := json.Marshal(k)
			vj, _ := json.Marshal(failed[k])
			if i > 0 {
				want += ","
			}
			want += string(kj) + ":" + string(vj)
		}
		want += "}}"
		if got := string(appendFilterResult(nil, &extender.FilterResult{FailedNodes: failed}, order)); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("others unresolvable", func(t *testing.T) {
		// The filter's "every other node" form writes what the map it
		// stands for writes; with a map beside it, both are kept.
		reason := "held <elsewhere> & \"quoted\""
		withZ := []string{"a-1", "a-2", "b<&>", "c\"q", "d\\e", "tab\t", "zz", "é"} // sorted, and "zz"
		for _, extra := range []map[string]string{nil, {"zz": "other"}} {
			short := &extender.FilterResult{NodeNames: &keep, FailedAndUnresolvableNodes: extra, OthersUnresolvable: reason}
			long := &extender.FilterResult{NodeNames: &keep, FailedAndUnresolvableNodes: maps.Clone(extra), OthersUnresolvable: reason}
			long.Expand(withZ)
			if long.OthersUnresolvable != "" || len(long.FailedAndUnresolvableNodes) != len(withZ)-len(keep) || (extra != nil && long.FailedAndUnresolvableNodes["zz"] != "other") {
				t.Fatalf("Expand left %q and %d nodes", long.OthersUnresolvable, len(long.FailedAndUnresolvableNodes))
			}
			want, err := json.Marshal(long)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendFilterResult(nil, short, withZ); string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if len(short.FailedAndUnresolvableNodes) != len(extra) {
				t.Errorf("encoding changed the result: %v", short.FailedAndUnresolvableNodes)
			}
		}
	})
	for _, hs := range [][]extender.HostPriority{nil, {}, {{Host: "a", Score: 10}, {Host: "<b>", Score: 0}, {Host: "ü", Score: -3}}} {
		want, err := json.Marshal(hs)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendPriorities(nil, hs); string(got) != string(want) {
			t.Errorf("priorities: got %s, want %s", got, want)
		}
	}
}
