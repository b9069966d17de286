package kubeclient

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/toposcope/toposcope/keys"
)

// Instance is what toposcope knows about the machine behind a Node.
type Instance struct {
	// Node is the Kubernetes node name; Hostname its kubernetes.io/hostname
	// label (empty when unset).
	Node, Hostname string
	// Provider is the spec.providerID scheme ("aws", "gce", "oci",
	// "azure", ...); empty without a provider ID.
	Provider string
	// InstanceID is the provider's ID of the machine: from the
	// toposcope.io/instance-id annotation, else Topograph's
	// topograph.run/instance, else from spec.providerID.
	InstanceID string
	// Region and Zone: the toposcope.io/region annotation, else
	// Topograph's topograph.run/region, else the topology.kubernetes.io
	// labels, else what the provider ID implies.
	Region, Zone string
}

// InstanceOf reads the instance facts of a Node.
func InstanceOf(n *corev1.Node) Instance {
	in := ParseProviderID(n.Spec.ProviderID)
	in.Node = n.Name
	in.Hostname = n.Labels[keys.Hostname]
	if v := n.Annotations[keys.TopographInstance]; v != "" {
		in.InstanceID = v
	}
	if v := n.Annotations[keys.InstanceID]; v != "" {
		in.InstanceID = v
	}
	if v := n.Labels[keys.TopologyZone]; v != "" {
		in.Zone = v
	}
	if v := n.Labels[keys.TopologyRegion]; v != "" {
		in.Region = v
	}
	if v := n.Annotations[keys.TopographRegion]; v != "" {
		in.Region = v
	}
	if v := n.Annotations[keys.Region]; v != "" {
		in.Region = v
	}
	return in
}

// InstanceKeys are the Node labels and annotations InstanceOf reads
// (spec.providerID besides), for a node watcher to watch.
func InstanceKeys() []string {
	return []string{
		keys.Hostname, keys.TopologyZone, keys.TopologyRegion,
		keys.InstanceID, keys.Region, keys.TopographInstance, keys.TopographRegion,
	}
}

// ParseProviderID splits a Node's spec.providerID into provider, instance
// ID, zone and region. Known forms:
//
//	aws:///us-east-1a/i-0abc            instance i-0abc, zone us-east-1a, region us-east-1
//	gce://project/us-central1-b/name    instance name, zone us-central1-b, region us-central1
//	oci://ocid1.instance.oc1.iad.xyz    instance the OCID, region iad (the OCID's region field)
//	azure:///subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/vm
//	                                    instance vm (scale-set VMs: "<set>_<index>")
//	openstack:///uuid, ibm://.../id, kind://docker/cluster/node, and any
//	other scheme                        instance = the last path segment
//
// An empty or unparsable ID gives an Instance with no instance ID.
func ParseProviderID(id string) Instance {
	scheme, rest, ok := strings.Cut(id, "://")
	if !ok || scheme == "" {
		return Instance{}
	}
	in := Instance{Provider: scheme}
	parts := splitPath(rest)
	if len(parts) == 0 {
		return in
	}
	last := parts[len(parts)-1]
	switch scheme {
	case "aws":
		in.InstanceID = last
		if len(parts) >= 2 {
			in.Zone = parts[len(parts)-2]
			in.Region = awsRegion(in.Zone)
		}
	case "gce":
		in.InstanceID = last
		if len(parts) >= 3 {
			in.Zone = parts[1]
			in.Region = gceRegion(in.Zone)
		}
	case "oci":
		in.InstanceID = last
		if f := strings.Split(last, "."); len(f) >= 5 && f[0] == "ocid1" {
			in.Region = f[3]
		}
	case "azure":
		in.InstanceID = last
		for i := 0; i+2 < len(parts); i++ {
			if strings.EqualFold(parts[i], "virtualMachineScaleSets") && strings.EqualFold(parts[i+2], "virtualMachines") && i+3 < len(parts) {
				in.InstanceID = parts[i+1] + "_" + parts[i+3]
				break
			}
		}
	default:
		in.InstanceID = last
	}
	return in
}

func splitPath(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "/") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// awsRegion turns an availability zone (us-east-1a) into its region.
func awsRegion(zone string) string {
	if zone == "" {
		return ""
	}
	if c := zone[len(zone)-1]; c >= 'a' && c <= 'z' {
		return zone[:len(zone)-1]
	}
	return zone
}

// gceRegion turns a zone (us-central1-b) into its region (us-central1).
func gceRegion(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}
