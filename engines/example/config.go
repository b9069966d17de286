package example

import (
	"strings"

	"github.com/toposcope/toposcope/internal/config"
)

// Values of Config.Unplaced: what the document does with a node under no
// switch.
const (
	// UnplacedList writes the node with no path (the default): the
	// document covers every node.
	UnplacedList = "list"
	// UnplacedOmit leaves the node out; Coverage names it, so that the
	// host reports it rather than lose it without a word.
	UnplacedOmit = "omit"
)

// Config is the engine's typed configuration: every key it accepts, with
// its YAML name. A key a REST request may set carries `request:"true"`;
// a key that names a file carries `path:"write"` (or "read"), which keeps
// it below the operator's paths roots, and is the operator's alone.
type Config struct {
	// Output is the file to write, replaced atomically; empty writes
	// the document to the engine's standard output (Deps.Stdout).
	Output string `yaml:"output,omitempty" path:"write"`
	// Separator goes between the switches of a node's path (default
	// " > ").
	Separator string `yaml:"separator" request:"true"`
	// Unplaced is UnplacedList (default) or UnplacedOmit.
	Unplaced string `yaml:"unplaced" request:"true"`
}

// DefaultConfig returns the defaults; a key the parameters leave out
// keeps its value from here.
func DefaultConfig() Config {
	return Config{Separator: " > ", Unplaced: UnplacedList}
}

// Validate reports every invalid field as a config.FieldError named by
// its YAML key, joined with config.Join: the operator sees all of them at
// once, each with its line.
func (c *Config) Validate() error {
	var errs []error
	if c.Separator == "" || strings.ContainsAny(c.Separator, "\n\r") {
		errs = append(errs, config.Errorf("separator", "want a non-empty string on one line, got %q", c.Separator))
	}
	if c.Unplaced != UnplacedList && c.Unplaced != UnplacedOmit {
		errs = append(errs, config.Errorf("unplaced", "want %s or %s, got %q", UnplacedList, UnplacedOmit, c.Unplaced))
	}
	return config.Join(errs...)
}
