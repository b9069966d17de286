package netq

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// Values of Config.NVLink.
const (
	// NVLinkAuto asks NetQ NVLink (NMX) for the hosts' NVLink domains and
	// warns, placing no domain, when it does not answer (the default).
	NVLinkAuto = "auto"
	// NVLinkOn fails the discovery when NMX does not answer.
	NVLinkOn = "on"
	// NVLinkOff does not ask.
	NVLinkOff = "off"
)

// computeNodesPath is NMX's compute-node list, relative to Config.URL.
const computeNodesPath = "nmx/v1/compute-nodes"

// ComputeNode is one host of NMX's compute-node list: its NVLink domain
// and the chassis its GPUs sit in.
type ComputeNode struct {
	Name         string `json:"Name" yaml:"name"`
	DomainUUID   string `json:"DomainUUID" yaml:"domainUUID"`
	LocationInfo struct {
		ChassisSerialNumber string `json:"ChassisSerialNumber" yaml:"chassisSerialNumber"`
	} `json:"LocationInfo" yaml:"locationInfo"`
}

// basicAuth is the Authorization header value of NMX's Basic auth.
func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// nvlinkDomains returns each host's NVLink domain and chassis, by host
// name: from the snapshot, or from NMX (GET nmx/v1/compute-nodes with
// Basic auth). With NVLinkAuto a failure is logged and gives none.
func (p *Provider) nvlinkDomains(ctx context.Context) (map[string]ComputeNode, error) {
	if p.cfg.NVLink == NVLinkOff {
		return nil, nil
	}
	nodes := p.cfg.ComputeNodes
	if p.cfg.Snapshot == nil {
		nodes = nil // decoded afresh: never into the configuration's own slice
		h := http.Header{"Authorization": {basicAuth(p.cfg.Username, p.password)}}
		if err := p.client.JSON(ctx, http.MethodGet, p.cfg.Endpoint(computeNodesPath), h, nil, &nodes); err != nil {
			err = classify("NVLink compute nodes", err)
			if p.cfg.NVLink == NVLinkOn {
				return nil, err
			}
			p.log.Warn("netq: NetQ NVLink (NMX) did not answer; no NVLink domains (set nvlink: off to stop asking)", "error", err)
			return nil, nil
		}
	}
	out := make(map[string]ComputeNode, len(nodes))
	for _, n := range nodes {
		if n.Name != "" && strings.TrimSpace(n.DomainUUID) != "" {
			out[n.Name] = n
		}
	}
	return out, nil
}

// checkNVLink validates Config.NVLink.
func checkNVLink(v string) error {
	switch v {
	case "", NVLinkAuto, NVLinkOn, NVLinkOff:
		return nil
	}
	return fmt.Errorf("must be %s, %s or %s, got %q", NVLinkAuto, NVLinkOn, NVLinkOff, v)
}
