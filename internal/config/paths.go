package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrOutsideRoots is wrapped when a configured file lies outside the
// roots of the paths section.
var ErrOutsideRoots = errors.New("outside the configured paths roots")

// Paths is the `paths` section: the folders below which the plugins'
// files must lie (symbolic links resolved). Empty lists put no bound on
// that use.
type Paths struct {
	// Read are the roots of the files plugins read: models, saved
	// ibnetdiscover and nvidia-smi outputs, credentials, CA and
	// kubeconfig files.
	Read []string `yaml:"read"`
	// Write are the roots of the files engines write (Slurm's
	// topology.conf or topology.yaml).
	Write []string `yaml:"write"`
}

// Validate reports a root that is not an absolute path.
func (p Paths) Validate() error {
	var errs []error
	for name, roots := range map[string][]string{"read": p.Read, "write": p.Write} {
		for i, r := range roots {
			if !filepath.IsAbs(r) {
				errs = append(errs, Errorf(fmt.Sprintf("%s[%d]", name, i), "must be an absolute path, got %q", r))
			}
		}
	}
	return errors.Join(errs...)
}

// Check reports every file-naming key of params (a plugin's parameters,
// under field) whose file lies outside the roots for its use, symbolic
// links resolved. A read value that names no existing file and holds no
// path separator (the sim provider's bundled model names) is no file.
func (p Paths) Check(spec ParamSpec, params *yaml.Node, field string) error {
	if params == nil || params.Kind != yaml.MappingNode || len(spec.Paths) == 0 {
		return nil
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(spec.Paths)) {
		mode := spec.Paths[name]
		key, val := lookupKey(params, strings.Split(name, "."))
		if key == nil || val.Kind != yaml.ScalarNode || val.Value == "" {
			continue
		}
		roots := p.Read
		if mode == "write" {
			roots = p.Write
		}
		if len(roots) == 0 {
			continue
		}
		if err := within(val.Value, mode, roots); err != nil {
			errs = append(errs, &FieldError{Field: join(field, name), Line: key.Line, Err: err})
		}
	}
	return errors.Join(errs...)
}

// lookupKey finds the key node and value of a dotted key path in a
// mapping, or nil.
func lookupKey(m *yaml.Node, path []string) (key, val *yaml.Node) {
	for m != nil && m.Kind == yaml.MappingNode {
		var next *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == path[0] {
				key, next = m.Content[i], m.Content[i+1]
				break
			}
		}
		if next == nil {
			return nil, nil
		}
		if len(path) == 1 {
			return key, next
		}
		m, path = next, path[1:]
	}
	return nil, nil
}

// within resolves path (a file to read, or to write: its folder must
// exist) and reports whether it lies below one of roots.
func within(path, mode string, roots []string) error {
	if _, err := os.Stat(path); err != nil && mode == "read" && !strings.ContainsRune(path, filepath.Separator) {
		return nil // a name, not a file
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil && mode == "write" {
		// A file not written yet: resolve its folder.
		dir, derr := filepath.EvalSymlinks(filepath.Dir(abs))
		if derr != nil {
			return fmt.Errorf("%s: %w", path, derr)
		}
		real, err = filepath.Join(dir, filepath.Base(abs)), nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range roots {
		root, rerr := filepath.EvalSymlinks(r)
		if rerr != nil {
			root = filepath.Clean(r)
		}
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil
		}
	}
	return fmt.Errorf("%s (resolved to %s) is %w for %s (%s)", path, real, ErrOutsideRoots, mode, strings.Join(roots, ", "))
}
