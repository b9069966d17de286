package config

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrShellSyntax is wrapped when a command given as one string holds
// shell syntax: commands run without a shell.
var ErrShellSyntax = errors.New("commands run without a shell: write the command as a list of arguments, or put the pipeline in a script")

// shellChars are characters that mean something only to a shell.
const shellChars = "|&;<>()$`'\"\\*?!~#\n"

// Command is a program and its arguments, run directly: never through a
// shell, so nothing in an argument is interpreted. In YAML it is a list
// of strings, or one string split at white space that must hold no shell
// syntax (quotes, pipes, redirections, variables, globs).
type Command []string

// ParseCommand splits s at white space into a Command; a string with
// shell syntax is refused (ErrShellSyntax).
func ParseCommand(s string) (Command, error) {
	if i := strings.IndexAny(s, shellChars); i >= 0 {
		return nil, fmt.Errorf("%q at %q: %w", s[i:i+1], s, ErrShellSyntax)
	}
	return Command(strings.Fields(s)), nil
}

// UnmarshalYAML accepts a list of strings or a plain string.
func (c *Command) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		cmd, err := ParseCommand(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		*c = cmd
		return nil
	case yaml.SequenceNode:
		var argv []string
		if err := n.Decode(&argv); err != nil {
			return err
		}
		*c = argv
		return nil
	}
	return fmt.Errorf("line %d: a command is a list of strings", n.Line)
}

// Check reports an empty program as a FieldError on key; an empty
// command is not an error (the setting is unset).
func (c Command) Check(key string) error {
	if len(c) > 0 && strings.TrimSpace(c[0]) == "" {
		return Errorf(key, "names no program")
	}
	return nil
}

// String returns the command for messages.
func (c Command) String() string { return strings.Join(c, " ") }
