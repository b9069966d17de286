package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/config"
)

// VersionAuto is the slurmVersion that reads the target version from the
// Slurm at hand: the output of VersionCommand (scontrol --version), when the
// engine is built. A head node upgraded to 25.05 or later then gets that
// release's rules without an edit.
const VersionAuto = "auto"

// versionTimeout bounds VersionCommand.
const versionTimeout = 10 * time.Second

// errAuto stands for "the version is known only once detected" in
// Validate, which then skips the checks that depend on it.
var errAuto = errors.New("slurmVersion auto")

// DetectVersion runs argv (scontrol --version) and reads the release
// series from what it prints: "slurm 24.11.5", "slurm-wlm 26.05.5".
func DetectVersion(ctx context.Context, argv []string) (Version, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := bounded.Run(ctx, argv, 4096)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || !strings.HasPrefix(f[0], "slurm") {
		return 0, fmt.Errorf("%s printed %q, not \"slurm MAJOR.MINOR.PATCH\": %w", strings.Join(argv, " "), truncate(string(out), 80), ErrVersion)
	}
	num, _, _ := strings.Cut(f[1], "-") // 24.11.0-0rc1
	return ParseVersion(num)
}

// resolveVersion replaces VersionAuto in cfg by the detected series.
func resolveVersion(cfg *Config) error {
	if cfg.SlurmVersion != VersionAuto {
		return nil
	}
	v, err := DetectVersion(context.Background(), cfg.VersionCommand)
	if err != nil {
		return config.Errorf("slurmVersion", "auto: %w", err)
	}
	cfg.SlurmVersion = v.String()
	return nil
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
