//go:build !linux

package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toposcope/toposcope/providers"
)

// ErrListen is wrapped when the agent cannot listen for LLDP frames.
var ErrListen = errors.New("listen for LLDP frames")

// ListenLLDP needs Linux's packet sockets.
func ListenLLDP(context.Context, []string, time.Duration) ([]providers.LLDPNeighbor, []string, error) {
	return nil, nil, fmt.Errorf("%w: only on Linux", ErrListen)
}
