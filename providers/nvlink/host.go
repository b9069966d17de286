package nvlink

import (
	"fmt"
	"slices"
	"strings"
)

// Host is what a host's GPUs say about its NVLink domain.
type Host struct {
	// GPUs is the number of GPUs reported.
	GPUs int
	// Clique is the host's NVLink domain; valid only when HasClique.
	Clique    Clique
	HasClique bool
	// Rack is the chassis serial number the GPUs share (the domain's
	// sub-domain); empty when the source does not give it.
	Rack string
	// Pending counts GPUs whose fabric registration is not complete
	// while others of the host are.
	Pending int
	// Failed lists the GPUs whose fabric registration completed without
	// success ("GPU 0000:… status \"Insufficient Resources\""): the host is
	// then left out of its NVLink domain.
	Failed []string
}

// Summarize reduces the GPUs of one host to its NVLink domain. Every GPU
// with a fabric must name the same clique (else ErrMixedCliques). A host
// whose GPUs have a fabric that is still registering, and none that has
// finished, is ErrFabricNotReady. GPUs without a fabric (PCIe, no
// NVSwitch, all-zero cluster UUID) give a host with no domain.
func Summarize(gpus []GPU) (Host, error) {
	h := Host{GPUs: len(gpus)}
	var cliques []string
	var racks []string
	var pending []string
	for _, g := range gpus {
		if g.ChassisSerial != "" && !slices.Contains(racks, g.ChassisSerial) {
			racks = append(racks, g.ChassisSerial)
		}
		if failed(g) {
			h.Failed = append(h.Failed, fmt.Sprintf("%s status %q", busID(g), g.Status))
			continue
		}
		if !registered(g) {
			pending = append(pending, fmt.Sprintf("%s state %q status %q", busID(g), g.State, g.Status))
			continue
		}
		if !g.HasClique {
			continue
		}
		if c := g.Clique.String(); !slices.Contains(cliques, c) {
			cliques = append(cliques, c)
			h.Clique, h.HasClique = g.Clique, true
		}
	}
	switch {
	case len(cliques) > 1:
		return Host{}, fmt.Errorf("%w: %s", ErrMixedCliques, strings.Join(cliques, ", "))
	case len(cliques) == 0 && len(pending) > 0:
		return Host{}, fmt.Errorf("%w: %s", ErrFabricNotReady, strings.Join(pending, "; "))
	case len(racks) > 1:
		return Host{}, fmt.Errorf("%w: GPUs of one host in chassis %s", ErrMixedCliques, strings.Join(racks, ", "))
	}
	h.Pending = len(pending)
	if len(h.Failed) > 0 { // a fabric that did not come up: no domain to vouch for
		h.Clique, h.HasClique = Clique{}, false
	}
	if h.HasClique && len(racks) == 1 {
		h.Rack = racks[0]
	}
	return h, nil
}

// failed reports whether a GPU's fabric registration completed without
// success (Status "Insufficient Resources", "Failure" and the like).
func failed(g GPU) bool {
	return strings.EqualFold(g.State, "completed") && g.Status != "" && !notAvailable(g.Status) && !strings.EqualFold(g.Status, "success")
}

// registered reports whether a GPU's fabric registration is over: it
// finished (Completed, Success), or there is no fabric to join; see
// failed for one that completed without success. CSV output
// has no state: its GPUs count as registered.
func registered(g GPU) bool {
	state := strings.ToLower(g.State)
	switch {
	case g.State == "" || notAvailable(g.State) || state == "completed" && (notAvailable(g.Status) || strings.EqualFold(g.Status, "success")):
		return true
	}
	return false
}

func busID(g GPU) string {
	if g.BusID == "" {
		return "GPU"
	}
	return "GPU " + g.BusID
}
