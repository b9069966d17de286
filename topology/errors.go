package topology

import (
	"errors"
	"fmt"
)

// Sentinel errors returned (wrapped) by the Builder. Test with errors.Is.
var (
	// ErrEmptyName means a node, switch or domain has an empty name or ID.
	ErrEmptyName = errors.New("empty name")
	// ErrInvalidName means a node name contains a character that no
	// scheduler accepts in a host name.
	ErrInvalidName = errors.New("invalid name")
	// ErrDuplicateNode means a node was added twice with different data.
	ErrDuplicateNode = errors.New("duplicate node")
	// ErrDuplicateSwitch means a switch ID was declared twice with
	// different data.
	ErrDuplicateSwitch = errors.New("duplicate switch")
	// ErrNameCollision means two different IDs map to the same safe name.
	ErrNameCollision = errors.New("name collision")
	// ErrTwoLeaves means a node was placed under more than one switch.
	ErrTwoLeaves = errors.New("node under two switches")
	// ErrTwoParents means a switch was placed under more than one parent;
	// redundant uplinks must be collapsed before building a tree.
	ErrTwoParents = errors.New("switch under two parents")
	// ErrMixedSwitch means a switch has both nodes and child switches.
	ErrMixedSwitch = errors.New("switch has both nodes and child switches")
	// ErrCycle means the switch links form a cycle.
	ErrCycle = errors.New("switch cycle")
	// ErrUnknownSwitch means a link or node refers to an undeclared switch.
	ErrUnknownSwitch = errors.New("unknown switch")
	// ErrUnknownNode means a domain or switch refers to an undeclared node.
	ErrUnknownNode = errors.New("unknown node")
	// ErrTwoDomains means a node was placed in more than one accelerator
	// domain or sub-domain.
	ErrTwoDomains = errors.New("node in two accelerator domains")
	// ErrSubDomain means a sub-domain's nodes are not all in its domain.
	ErrSubDomain = errors.New("sub-domain outside its domain")
)

// NameError reports the first character that makes Name unusable.
type NameError struct {
	Name string
	Char byte
}

// Error implements error.
func (e *NameError) Error() string {
	return fmt.Sprintf("name %q: character %q is not allowed in a host name", e.Name, e.Char)
}

// Unwrap lets errors.Is match ErrInvalidName.
func (e *NameError) Unwrap() error { return ErrInvalidName }
