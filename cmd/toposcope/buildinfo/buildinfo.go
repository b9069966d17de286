// Package buildinfo says which toposcope release a binary is: both
// binaries (toposcope and toposcope-agent) print it.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// baseVersion is the release this tree will become.
const baseVersion = "0.1.0"

// version, commit and date are set at link time by release builds (make
// build, make image, make package): -ldflags "-X
// github.com/toposcope/toposcope/cmd/toposcope/buildinfo.version=1.2.3
// -X ….commit=<git revision> -X ….date=<RFC 3339 UTC>". They are never
// written at run time.
var version, commit, date string

// Info is what a binary knows of its build.
type Info struct {
	// Version is the release (Version).
	Version string
	// Commit is the git revision the binary was built from; "unknown"
	// when neither the linker nor the Go toolchain recorded one.
	Commit string
	// Date is the time of the build (or of the commit, as the Go
	// toolchain records it), RFC 3339; "unknown" when not recorded.
	Date string
	// Modified is true when the tree had uncommitted changes.
	Modified bool
	// GoVersion is the Go release that built the binary.
	GoVersion string
}

// Version returns the toposcope version: the one set at link time, else
// the module version `go install` records, else baseVersion with "-dev"
// and the commit the binary was built from.
func Version() string { return Read().Version }

// Read returns the build information: the values set at link time, else
// what the Go toolchain recorded (vcs.revision, vcs.time, vcs.modified).
func Read() Info {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return read(info, version, commit, date)
}

// read is Read over the given build information and link-time values.
func read(info *debug.BuildInfo, version, commit, date string) Info {
	out := Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version()}
	var rev, vcsTime string
	if info != nil {
		out.GoVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				out.Modified = s.Value == "true"
			}
		}
	}
	if out.Commit == "" {
		out.Commit = rev
	}
	if out.Date == "" {
		out.Date = vcsTime
	}
	if out.Version == "" {
		out.Version = baseVersion + "-dev"
		switch {
		case info != nil && info.Main.Version != "" && info.Main.Version != "(devel)":
			out.Version = strings.TrimPrefix(info.Main.Version, "v")
		case len(rev) >= 12:
			out.Version += "+" + rev[:12]
		}
	}
	if out.Commit == "" {
		out.Commit = "unknown"
	}
	if out.Date == "" {
		out.Date = "unknown"
	}
	return out
}

// String is the one line both `toposcope version` and `toposcope
// --version` print after the program name: "0.1.0 (commit 0123abcd…,
// built 2026-01-02T03:04:05Z, go1.26.0)".
func (i Info) String() string {
	c := i.Commit
	if i.Modified {
		c += "-dirty"
	}
	return fmt.Sprintf("%s (commit %s, built %s, %s)", i.Version, c, i.Date, i.GoVersion)
}
