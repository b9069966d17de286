// Package keys is the one list of the label and annotation keys that
// toposcope reads and writes on Kubernetes objects. They are public API:
// operators select on them, schedulers are configured with them and
// other tools set them, so none may change without a migration note.
//
// It imports nothing; every package that names a key takes it from here.
package keys

// Prefix is the domain of every toposcope annotation.
const Prefix = "toposcope.io/"

// LabelPrefix is the domain of toposcope's topology labels (preset
// "toposcope" of the Kubernetes label engines).
const LabelPrefix = "topology." + Prefix

// Topology labels written by the Kubernetes engines with the "toposcope"
// preset: TierPrefix + "0" is the leaf switch, "1" the next level up.
const (
	// TierPrefix starts the switch-tier labels: tier-0, tier-1, ...
	TierPrefix = LabelPrefix + "tier-"
	// AcceleratorDomain is the NVLink domain (Slurm block) label.
	AcceleratorDomain = LabelPrefix + "accelerator-domain"
	// AcceleratorSubdomain is the NVLink sub-domain (rack) label.
	AcceleratorSubdomain = LabelPrefix + "accelerator-subdomain"
)

// Node annotations that operators or `toposcope agent` set, read for
// instance mapping and NVLink domains.
const (
	// InstanceID is the provider's instance ID of the node; it overrides
	// what spec.providerID says.
	InstanceID = Prefix + "instance-id"
	// Region is the node's cloud region; it overrides the well-known
	// topology.kubernetes.io/region label.
	Region = Prefix + "region"
	// NVLinkClique is the NVLink domain, <ClusterUUID>.<CliqueID>.
	NVLinkClique = Prefix + "nvlink-clique"
	// NVLinkRack is the chassis serial number of the node's GPUs.
	NVLinkRack = Prefix + "nvlink-rack"
	// HCAs lists the node's InfiniBand HCAs, "mlx5_0=<node GUID>,...".
	HCAs = Prefix + "hcas"
	// LLDP holds the switch ports the node's fabric NICs are cabled to,
	// as LLDP says: the agent's report's "lldp" list, as JSON.
	LLDP = Prefix + "lldp"
)

// Node annotations that NVIDIA Topograph's node-data-broker writes, read
// when toposcope's own are absent, so that a cluster moving from
// Topograph keeps its instance mapping and NVLink cliques.
const (
	// TopographInstance is the provider's instance ID of the node.
	TopographInstance = "topograph.run/instance"
	// TopographRegion is the node's cloud region.
	TopographRegion = "topograph.run/region"
	// TopographClusterID is the NVLink domain, <ClusterUUID>.<CliqueID>.
	TopographClusterID = "topograph.run/cluster-id"
)

// SwitchID annotates the objects that stand for one switch (Volcano
// HyperNodes) with the provider's ID of the switch, which their name may
// only approximate.
const SwitchID = Prefix + "switch-id"

// DomainID annotates the objects that stand for one accelerator (NVLink)
// domain, or for its part under one leaf switch (Volcano HyperNodes),
// with the provider's ID of the domain.
const DomainID = Prefix + "domain-id"

// Annotations the Slinky engine sets on the topology ConfigMap.
const (
	// Generation counts the content changes: 1 at creation, one more at
	// each write.
	Generation = Prefix + "generation"
	// ContentHash is "sha256:<hex>" of the topology file.
	ContentHash = Prefix + "content-hash"
	// SourceSnapshot identifies the discovery the file comes from: the
	// service's snapshot ID, or "graph-sha256:<hex>" of the graph.
	SourceSnapshot = Prefix + "source-snapshot"
	// SlurmVersion is the Slurm version the file is written for.
	SlurmVersion = Prefix + "slurm-version"
	// SlurmPlugin is the Slurm topology plugin the file is written for.
	SlurmPlugin = Prefix + "slurm-plugin"
)

// Pod label and annotations read by the kubernetes placement ledger
// source (their defaults; each is configurable).
const (
	// Account is the fair-share account of a pod.
	Account = Prefix + "account"
	// MinRuntime is a Go duration during which a pod is protected.
	MinRuntime = Prefix + "min-runtime"
	// Resumable marks a pod whose work resumes after preemption.
	Resumable = Prefix + "resumable"
)

// Well-known Kubernetes keys toposcope reads or writes.
const (
	// Hostname is the kubelet's label that ends every scheduler topology.
	Hostname = "kubernetes.io/hostname"
	// TopologyRegion is the well-known region label of a Node.
	TopologyRegion = "topology.kubernetes.io/region"
	// TopologyZone is the well-known zone label of a Node.
	TopologyZone = "topology.kubernetes.io/zone"
	// ManagedBy marks the objects toposcope writes.
	ManagedBy = "app.kubernetes.io/managed-by"
)
