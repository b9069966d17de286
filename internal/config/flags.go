package config

import (
	"reflect"
)

// Flag is a command-line flag that a plugin offers for one of its
// parameters (`toposcope generate --model NAME` sets the sim provider's
// model). The CLI makes its plugin flags from these declarations alone.
type Flag struct {
	// Name is the flag without its dashes, e.g. "model".
	Name string
	// Key is the parameter the flag sets, e.g. "model".
	Key string
	// Usage is the flag's help.
	Usage string
	// Bool makes the flag a switch. Without Value, Key is set to the
	// switch's "true" or "false"; with Value, Key is set to Value when the
	// switch is on and left alone when it is off (--dry-run sets mode to
	// dry-run).
	Bool  bool
	Value string
}

// Flagged is implemented by the typed configuration of a plugin that
// offers command-line flags.
type Flagged interface {
	// CLIFlags returns the plugin's flags.
	CLIFlags() []Flag
}

// FlagsOf returns the flags that a plugin's typed configuration (a
// ParamSpec's Defaults, a value or a pointer) declares, or nil.
func FlagsOf(cfg any) []Flag {
	if f, ok := cfg.(Flagged); ok {
		return f.CLIFlags()
	}
	v := reflect.ValueOf(cfg)
	if !v.IsValid() || v.Kind() == reflect.Pointer {
		return nil
	}
	p := reflect.New(v.Type()) // methods with pointer receivers
	p.Elem().Set(v)
	if f, ok := p.Interface().(Flagged); ok {
		return f.CLIFlags()
	}
	return nil
}
