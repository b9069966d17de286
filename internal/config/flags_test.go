package config_test

import (
	"testing"

	"github.com/toposcope/toposcope/internal/config"
)

type valueFlags struct{}

func (valueFlags) CLIFlags() []config.Flag { return []config.Flag{{Name: "a", Key: "a"}} }

type pointerFlags struct{ key string }

func (p *pointerFlags) CLIFlags() []config.Flag { return []config.Flag{{Name: "b", Key: p.key}} }

// TestFlagsOf: the flags of a configuration are found whether its
// CLIFlags has a value or a pointer receiver, from the value a ParamSpec
// holds; a configuration without flags has none.
func TestFlagsOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  any
		want string
	}{
		{"value receiver", valueFlags{}, "a"},
		{"pointer receiver, value held", pointerFlags{key: "k"}, "k"},
		{"pointer receiver, pointer held", &pointerFlags{key: "p"}, "p"},
		{"spec defaults", config.SpecOf(pointerFlags{key: "s"}).Defaults, "s"},
	}
	for _, tt := range tests {
		got := config.FlagsOf(tt.cfg)
		if len(got) != 1 || got[0].Key != tt.want {
			t.Errorf("%s: FlagsOf = %+v, want one flag setting %s", tt.name, got, tt.want)
		}
	}
	for _, cfg := range []any{nil, sample{}, &sample{}} {
		if got := config.FlagsOf(cfg); got != nil {
			t.Errorf("FlagsOf(%T) = %+v, want none", cfg, got)
		}
	}
}
