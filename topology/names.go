package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxNameLen is the longest name SafeName returns. Slurm rejects switch
// names longer than HOST_NAME_MAX (64 on Linux).
const MaxNameLen = 64

// hashLen is the number of hex digits of the ID's SHA-256 appended to a
// sanitized name.
const hashLen = 8

// SafeName derives a stable, consumer-safe name from a provider's own ID.
//
// An ID made only of ASCII letters, digits, '-' and '_' that is at most
// MaxNameLen long and starts with a letter or digit is returned unchanged.
// Any other ID becomes a readable prefix (unsafe runs replaced by '-') plus
// '-' and the first eight hex digits of the SHA-256 of the full ID, at most
// MaxNameLen in all. The result therefore never contains ',', '[', ']',
// '{', '}', ':', '.', '#', '=' or whitespace, and it depends on the ID
// alone: adding or removing another switch never renames this one.
func SafeName(id string) string {
	if isSafe(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	suffix := hex.EncodeToString(sum[:])[:hashLen]
	prefix := sanitize(id, MaxNameLen-hashLen-1)
	if prefix == "" {
		return "h" + suffix
	}
	return prefix + "-" + suffix
}

// isSafe reports whether id can be used as a name without change.
func isSafe(id string) bool {
	if id == "" || len(id) > MaxNameLen || !isAlnum(id[0]) {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !isNameByte(id[i]) {
			return false
		}
	}
	return true
}

// sanitize keeps the safe bytes of id, folds each run of unsafe bytes into
// one '-', trims leading and trailing '-'/'_' and cuts the result to max.
func sanitize(id string, limit int) string {
	var b strings.Builder
	b.Grow(min(len(id), limit))
	dash := false
	for i := 0; i < len(id) && b.Len() < limit; i++ {
		c := id[i]
		if isNameByte(c) {
			b.WriteByte(c)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-_")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isNameByte(c byte) bool {
	return isAlnum(c) || c == '-' || c == '_'
}

// CheckNodeName reports why name cannot be a scheduler node name, or nil.
// Node names are not renamed (they are the cluster's own host names), so
// they must already be valid hostlist atoms.
func CheckNodeName(name string) error {
	if name == "" {
		return ErrEmptyName
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c <= ' ', c == ',', c == '[', c == ']', c == '{', c == '}', c == ':', c == '=', c == '#', c == 0x7f:
			return &NameError{Name: name, Char: c}
		}
	}
	return nil
}

// MaxHostNameLen is the longest host name CheckHostName accepts: a
// Kubernetes Node name is a DNS subdomain of at most 253 characters.
const MaxHostNameLen = 253

// maxLabelLen is the longest dot-separated part of a host name (RFC 1123).
const maxLabelLen = 63

// CheckHostName reports why name cannot be a host name that both Slurm
// and Kubernetes accept, or nil. It is CheckNodeName narrowed to what a
// name that arrives from outside (an agent's report) may be: ASCII
// letters, digits, '-', '_' and '.', starting and ending with a letter or
// digit, parts between dots of at most 63 characters, at most
// MaxHostNameLen in all. ('_' is not valid in a Kubernetes name but is in
// a Slurm NodeName; a Kubernetes cluster never has such a Node.)
func CheckHostName(name string) error {
	if err := CheckNodeName(name); err != nil {
		return err
	}
	if len(name) > MaxHostNameLen {
		return fmt.Errorf("%w: name of %d characters: at most %d", ErrInvalidName, len(name), MaxHostNameLen)
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			if label == 0 {
				return fmt.Errorf("%w: name %q: empty part between dots", ErrInvalidName, name)
			}
			label = 0
			continue
		case !isNameByte(c):
			return &NameError{Name: name, Char: c}
		}
		label++
		if label > maxLabelLen {
			return fmt.Errorf("%w: name %q: a part between dots is longer than %d characters", ErrInvalidName, name, maxLabelLen)
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return fmt.Errorf("%w: name %q must start and end with a letter or digit", ErrInvalidName, name)
	}
	return nil
}
