package providers

import (
	"context"
	"time"
)

// NodeFacts are what a node agent (`toposcope agent`) learned on its node
// and reported to the server.
type NodeFacts struct {
	// Node is the node's name (the Kubernetes Node, or the Slurm node).
	Node string `json:"node" yaml:"node"`
	// InstanceID, Region and Zone come from the metadata service; empty
	// when none answered.
	InstanceID string `json:"instanceID,omitempty" yaml:"instanceID,omitempty"`
	Region     string `json:"region,omitempty" yaml:"region,omitempty"`
	Zone       string `json:"zone,omitempty" yaml:"zone,omitempty"`
	// GPUs is the number of GPUs nvidia-smi reported.
	GPUs int `json:"gpus,omitempty" yaml:"gpus,omitempty"`
	// Clique is the NVLink domain, "<ClusterUUID>.<CliqueID>"; empty when
	// the GPUs have no multi-node fabric.
	Clique string `json:"clique,omitempty" yaml:"clique,omitempty"`
	// Rack is the chassis serial number the GPUs share, where given.
	Rack string `json:"rack,omitempty" yaml:"rack,omitempty"`
	// HCAs are the node's InfiniBand/RoCE adapters, by name.
	HCAs []HCA `json:"hcas,omitempty" yaml:"hcas,omitempty"`
	// Fabric is the node's place in its cloud's fabric, closest unit
	// first, as the node's metadata service gives it (OCI's local block,
	// network block and HPC island); empty when none does.
	Fabric []string `json:"fabric,omitempty" yaml:"fabric,omitempty"`
	// FabricDomain is the accelerator domain the metadata service gives
	// (OCI's GPU memory fabric), used when nvidia-smi gives no clique.
	FabricDomain string `json:"fabricDomain,omitempty" yaml:"fabricDomain,omitempty"`
	// LLDP are the switch ports the node's fabric NICs are cabled to, as
	// the switches' LLDP frames say (an Ethernet/RoCE fabric).
	LLDP []LLDPNeighbor `json:"lldp,omitempty" yaml:"lldp,omitempty"`
}

// LLDPNeighbor is the switch and port at the other end of one NIC, as
// the switch's LLDP frames say.
type LLDPNeighbor struct {
	// Interface is the node's NIC (ens4f0np0).
	Interface string `json:"interface" yaml:"interface"`
	// ChassisID identifies the switch; ChassisIDType says what it is
	// (mac, ip, local...).
	ChassisID     string `json:"chassisID" yaml:"chassisID"`
	ChassisIDType string `json:"chassisIDType,omitempty" yaml:"chassisIDType,omitempty"`
	// SysName is the switch's system name, where it sends one.
	SysName string `json:"sysName,omitempty" yaml:"sysName,omitempty"`
	// PortID identifies the switch's port; PortIDType says what it is
	// (ifname, mac, local...).
	PortID     string `json:"portID" yaml:"portID"`
	PortIDType string `json:"portIDType,omitempty" yaml:"portIDType,omitempty"`
	// PortDescr is the port's description (often its name, swp17).
	PortDescr string `json:"portDescr,omitempty" yaml:"portDescr,omitempty"`
	// MgmtIPs are the switch's management addresses.
	MgmtIPs []string `json:"mgmtIPs,omitempty" yaml:"mgmtIPs,omitempty"`
	// Capabilities are the capabilities the switch says are enabled, as
	// lldpcli names them in lower case (bridge, router, station...).
	Capabilities []string `json:"capabilities,omitempty" yaml:"capabilities,omitempty"`
}

// HCA is one host channel adapter of a node.
type HCA struct {
	// Name is the device name (mlx5_0).
	Name string `json:"name" yaml:"name"`
	// NodeGUID is the adapter's node GUID, 16 lower-case hex digits.
	NodeGUID string `json:"nodeGUID,omitempty" yaml:"nodeGUID,omitempty"`
}

// AgentReport is the latest report of one node's agent, as the server
// keeps it.
type AgentReport struct {
	// Facts are what the agent sent (PUT /v1/agents/<node>).
	Facts NodeFacts `json:"facts" yaml:"facts"`
	// ReceivedAt is when the server stored the report.
	ReceivedAt time.Time `json:"receivedAt" yaml:"receivedAt"`
}

// AgentReports lists what node agents reported. The server's store
// implements it; providers find it in Deps.
type AgentReports interface {
	// AgentReports returns the latest report of every node, by node name.
	AgentReports(ctx context.Context) ([]AgentReport, error)
}
