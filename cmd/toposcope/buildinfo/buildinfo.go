// Package buildinfo says which toposcope release a binary is: both
// binaries (toposcope and toposcope-agent) print it.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// baseVersion is the release this tree will become.
const baseVersion = "0.1.0"

// version is set at link time by release builds (make build, make
// image, make package): -ldflags "-X
// github.com/toposcope/toposcope/cmd/toposcope/buildinfo.version=1.2.3". It is
// never written at run time.
var version string

// Version returns the toposcope version: the one set at link time, else
// the module version `go install` records, else baseVersion with "-dev"
// and the commit the binary was built from.
func Version() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return baseVersion + "-dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	v := baseVersion + "-dev"
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}
