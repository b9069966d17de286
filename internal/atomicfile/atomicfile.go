// Package atomicfile replaces files so that readers see either the old
// content or the new, never a half-written file.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNoReader is wrapped when the file to write is a FIFO that no
// process has open for reading.
var ErrNoReader = errors.New("no reader")

// Write replaces path with data: it writes a temporary file in the same
// directory, syncs it, sets mode, renames it over path and syncs the
// directory. On any failure path is left as it was and the temporary file
// is removed. It reports whether the file changed: when path already holds
// exactly data, nothing is written.
//
// A symbolic link is followed: the file it points to is replaced (beside
// it), so that a topology.conf linked to shared storage keeps being the
// one updated, and the link stays a link. A character device or a FIFO
// (/dev/null, /dev/stdout) is written in place, never replaced by a
// regular file; a FIFO that no process reads, a directory or a socket is
// refused.
func Write(path string, data []byte, mode os.FileMode) (changed bool, err error) {
	target, err := resolve(path)
	if err != nil {
		return false, err
	}
	info, err := os.Stat(target)
	switch {
	case err == nil && !info.Mode().IsRegular():
		return writeInPlace(target, info, data)
	case err == nil:
		if old, rerr := os.ReadFile(target); rerr == nil && bytes.Equal(old, data) {
			return false, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	return replace(target, data, mode)
}

// maxLinks bounds the symbolic links followed, as the kernel does.
const maxLinks = 40

// resolve follows the symbolic links of path's last element, including a
// dangling one (its target is where the file will be created). The
// directories on the way are taken as they are.
func resolve(path string) (string, error) {
	for range maxLinks {
		info, err := os.Lstat(path)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			return path, nil //nolint:nilerr // a missing file is created; other errors surface when it is written
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("read link %s: %w", path, err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("%s: more than %d symbolic links", path, maxLinks)
}

// writeInPlace writes data to a file that cannot be replaced: a
// character device or FIFO.
func writeInPlace(path string, info fs.FileInfo, data []byte) (bool, error) {
	t := info.Mode().Type()
	if t&(fs.ModeCharDevice|fs.ModeDevice|fs.ModeNamedPipe) == 0 || t&fs.ModeDir != 0 {
		return false, fmt.Errorf("%s is a %s, not a file to write", path, describe(info.Mode()))
	}
	flags := os.O_WRONLY
	if t&fs.ModeNamedPipe != 0 {
		// Opening a FIFO for writing waits for a reader, in a system
		// call no signal ends: without one it would block for ever.
		flags |= syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, syscall.ENXIO) {
		return false, fmt.Errorf("%s is a FIFO that no process reads: %w", path, ErrNoReader)
	}
	if err != nil {
		return false, err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return m.Type().String()
}

// replace writes data to a temporary file beside path and renames it over
// path.
func replace(path string, data []byte, mode os.FileMode) (changed bool, err error) {
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
