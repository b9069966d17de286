// Package atomicfile replaces files so that readers see either the old
// content or the new, never a half-written file.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data: it writes a temporary file in the same
// directory, syncs it, sets mode, renames it over path and syncs the
// directory. On any failure path is left as it was and the temporary file
// is removed. It reports whether the file changed: when path already holds
// exactly data, nothing is written.
func Write(path string, data []byte, mode os.FileMode) (changed bool, err error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return false, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return false, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return false, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("replace %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		serr := d.Sync()
		cerr := d.Close()
		if serr != nil || cerr != nil {
			return true, fmt.Errorf("sync directory %s: %w", dir, errors.Join(serr, cerr))
		}
	}
	return true, nil
}
