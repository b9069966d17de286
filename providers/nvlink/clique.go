package nvlink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CliqueLabel is the node label the GPU Operator (GPU Feature Discovery)
// sets to "<ClusterUUID>.<CliqueID>".
const CliqueLabel = "nvidia.com/gpu.clique"

// Sentinel errors.
var (
	// ErrSyntax means nvidia-smi output or a clique label is malformed.
	ErrSyntax = errors.New("malformed NVLink fabric information")
	// ErrMixedCliques means the GPUs of one host report different
	// NVLink domains.
	ErrMixedCliques = errors.New("GPUs of one host are in different NVLink domains")
	// ErrFabricNotReady means a host's GPUs have not finished joining
	// their NVLink fabric (state not Completed, or status not Success).
	ErrFabricNotReady = errors.New("NVLink fabric registration not complete")
)

// Clique names an NVLink domain: the fabric's cluster UUID and the
// clique within it.
type Clique struct {
	// ClusterUUID is lower-case, 8-4-4-4-12 hex digits.
	ClusterUUID string
	// ID is the clique ID.
	ID uint32
}

// String returns "<ClusterUUID>.<CliqueID>", the form of the
// nvidia.com/gpu.clique label and of toposcope's domain IDs.
func (c Clique) String() string { return c.ClusterUUID + "." + strconv.FormatUint(uint64(c.ID), 10) }

// zeroUUID is what GPUs without a multi-node NVLink fabric report.
const zeroUUID = "00000000-0000-0000-0000-000000000000"

// ParseCliqueLabel parses a nvidia.com/gpu.clique value,
// "<ClusterUUID>.<CliqueID>".
func ParseCliqueLabel(v string) (Clique, error) {
	uuid, id, ok := strings.Cut(strings.TrimSpace(v), ".")
	if !ok {
		return Clique{}, fmt.Errorf("%w: clique label %q: want <ClusterUUID>.<CliqueID>", ErrSyntax, v)
	}
	u, err := normUUID(uuid)
	if err != nil {
		return Clique{}, fmt.Errorf("%w: clique label %q: %w", ErrSyntax, v, err)
	}
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return Clique{}, fmt.Errorf("%w: clique label %q: clique ID %q is not a 32-bit number", ErrSyntax, v, id)
	}
	return Clique{ClusterUUID: u, ID: uint32(n)}, nil
}

// normUUID validates a UUID (with or without dashes) and returns it
// lower-case with dashes.
func normUUID(s string) (string, error) {
	h := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "-", ""))
	if len(h) != 32 {
		return "", fmt.Errorf("cluster UUID %q is not 32 hex digits", s)
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("cluster UUID %q is not hex", s)
		}
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

// notAvailable reports whether an nvidia-smi value means "no value".
func notAvailable(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "[]")) {
	case "", "n/a", "not supported", "unknown error", "insufficient permissions", "requested functionality has been deprecated":
		return true
	}
	return false
}
