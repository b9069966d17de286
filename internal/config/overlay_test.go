package config_test

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
)

// TestOverlay: the request's keys replace the operator's, the operator's
// other keys stay, and the result names no line, so that an error about
// a key of the operator's file names the key alone; the operator's node
// keeps its lines.
func TestOverlay(t *testing.T) {
	t.Parallel()
	base := node(t, "model: m\n\ninner:\n  depth: -1\noutput: o\n")
	tests := []struct {
		name      string
		base      *yaml.Node
		over      *yaml.Node
		want      string
		wantError string
	}{
		{"both", base, node(t, "{output: p}"), "model: m\ninner:\n    depth: -1\noutput: p\n", "inner.depth: must not be negative, got -1"},
		{"no request keys", base, nil, "model: m\ninner:\n    depth: -1\noutput: o\n", "inner.depth: must not be negative, got -1"},
		{"no operator keys", nil, node(t, "\n\nmodel: \"\"\n"), "model: \"\"\n", "model: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := config.Overlay(tt.base, tt.over)
			out, err := yaml.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("Overlay =\n%s\nwant\n%s", out, tt.want)
			}
			var s sample
			err = config.Decode(got, &s, "")
			if err == nil || err.Error() != tt.wantError {
				t.Errorf("Decode error %v, want %q", err, tt.wantError)
			}
		})
	}
	var s sample
	if err := config.Decode(base, &s, ""); err == nil || !strings.Contains(err.Error(), "(line 4)") {
		t.Errorf("the operator's node decodes with %v, want its line 4", err)
	}
}
