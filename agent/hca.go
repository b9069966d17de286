package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toposcope/toposcope/providers"
)

// DefaultSysfsDir is where Linux lists RDMA devices.
const DefaultSysfsDir = "/sys/class/infiniband"

// ReadHCAs lists the adapters under dir (one folder per device, with a
// node_guid file such as "e09d:7303:0000:0001"), sorted by name. A
// missing dir means no HCAs.
func ReadHCAs(dir string) ([]providers.HCA, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGather, err)
	}
	var out []providers.HCA
	for _, e := range entries {
		h := providers.HCA{Name: e.Name()}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name(), "node_guid"))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("%w: %s: %w", ErrGather, e.Name(), err)
		default:
			guid, err := normGUID(string(raw))
			if err != nil {
				return nil, fmt.Errorf("%w: %s/node_guid: %w", ErrGather, filepath.Join(dir, e.Name()), err)
			}
			h.NodeGUID = guid
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// normGUID turns "e09d:7303:0000:0001" or "0xe09d730300000001" into 16
// lower-case hex digits.
func normGUID(s string) (string, error) {
	h := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	h = strings.TrimPrefix(h, "0x")
	if len(h) != 16 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("GUID %q is not 16 hex digits", strings.TrimSpace(s))
	}
	return h, nil
}
