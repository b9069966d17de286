package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestRead(t *testing.T) {
	t.Parallel()
	vcs := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name                  string
		info                  *debug.BuildInfo
		version, commit, date string
		want                  string
	}{
		{name: "link time wins", info: vcs, version: "1.2.3", commit: "feedface", date: "2026-02-03T00:00:00Z",
			want: "1.2.3 (commit feedface-dirty, built 2026-02-03T00:00:00Z, go1.26.0)"},
		{name: "from the toolchain", info: vcs,
			want: "0.1.0-dev+0123456789ab (commit 0123456789abcdef0123-dirty, built 2026-01-02T03:04:05Z, go1.26.0)"},
		{name: "go install", info: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.2.0"}},
			want: "0.2.0 (commit unknown, built unknown, go1.26.0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := read(tt.info, tt.version, tt.commit, tt.date).String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
