package extender

import (
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// The wire types of kube-scheduler's HTTP extender protocol
// (k8s.io/kube-scheduler/extender/v1). Those types carry no JSON tags,
// so the keys are the Go field names, and so are these.

// MaxScore is the highest score an extender gives (MaxExtenderPriority).
const MaxScore = 10

// Pod is the pod a call is about: Kubernetes' own object, decoded as
// Kubernetes decodes it (fields it does not know are ignored, so that a
// newer scheduler's pods are read), while the envelope around it is
// decoded strictly.
type Pod struct{ corev1.Pod }

// UnmarshalJSON decodes a Pod; a value of the wrong type is an error.
func (p *Pod) UnmarshalJSON(data []byte) error { return json.Unmarshal(data, &p.Pod) }

// MarshalJSON encodes the Pod as Kubernetes does.
func (p *Pod) MarshalJSON() ([]byte, error) { return json.Marshal(&p.Pod) }

// NodeList stands for the Node objects a scheduler without a node cache
// sends; the extender needs the names only, so it asks for
// nodeCacheCapable: true, and a non-empty list is refused.
type NodeList struct{ present bool }

// UnmarshalJSON records whether a list was sent.
func (n *NodeList) UnmarshalJSON(data []byte) error {
	n.present = string(data) != "null"
	return nil
}

// ErrNodeObjects is returned for a call that sends Node objects instead
// of names.
var ErrNodeObjects = errors.New("the call sent Node objects: configure the extender with nodeCacheCapable: true, so that it sends node names")

// Args is a filter or prioritize call (ExtenderArgs).
type Args struct {
	Pod       *Pod
	Nodes     *NodeList
	NodeNames *[]string
}

// FilterResult answers a filter call (ExtenderFilterResult): NodeNames
// is a subset of the call's; FailedNodes says why each other node is
// out, FailedAndUnresolvableNodes those that preemption cannot help.
type FilterResult struct {
	Nodes                      *NodeList         `json:",omitempty"`
	NodeNames                  *[]string         `json:",omitempty"`
	FailedNodes                map[string]string `json:",omitempty"`
	FailedAndUnresolvableNodes map[string]string `json:",omitempty"`
	Error                      string            `json:",omitempty"`
	// OthersUnresolvable, when not empty, is the reason every node of
	// the call that NodeNames does not keep is out, preemption not
	// helping: the answer lists them under FailedAndUnresolvableNodes
	// with it. At 100,000 nodes that saves a map of 100,000 names per
	// call; Expand builds the map for readers that want it.
	OthersUnresolvable string `json:"-"`
}

// Expand moves OthersUnresolvable into FailedAndUnresolvableNodes:
// every name of the call's names that NodeNames does not keep and the
// map does not have yet, with that reason.
func (r *FilterResult) Expand(names []string) {
	if r.OthersUnresolvable == "" {
		return
	}
	kept := r.Kept()
	if r.FailedAndUnresolvableNodes == nil {
		r.FailedAndUnresolvableNodes = make(map[string]string, len(names))
	}
	for _, n := range names {
		if _, ok := kept[n]; ok {
			continue
		}
		if _, ok := r.FailedAndUnresolvableNodes[n]; !ok {
			r.FailedAndUnresolvableNodes[n] = r.OthersUnresolvable
		}
	}
	r.OthersUnresolvable = ""
}

// Kept returns the set of NodeNames.
func (r *FilterResult) Kept() map[string]struct{} {
	var kept map[string]struct{}
	if r.NodeNames != nil {
		kept = make(map[string]struct{}, len(*r.NodeNames))
		for _, n := range *r.NodeNames {
			kept[n] = struct{}{}
		}
	}
	return kept
}

// HostPriority is one node's score (0 to MaxScore).
type HostPriority struct {
	Host  string
	Score int64
}

// MetaPod names a victim pod by UID.
type MetaPod struct{ UID string }

// MetaVictims are the victims proposed on one node.
type MetaVictims struct {
	Pods             []*MetaPod
	NumPDBViolations int64
}

// Victims are the victims proposed on one node, as whole pods (a
// scheduler without a node cache sends these).
type Victims struct {
	Pods             []*Pod
	NumPDBViolations int64
}

// PreemptionArgs is a preempt call (ExtenderPreemptionArgs).
type PreemptionArgs struct {
	Pod                   *Pod
	NodeNameToVictims     map[string]*Victims
	NodeNameToMetaVictims map[string]*MetaVictims
}

// PreemptionResult answers a preempt call: the nodes, with their
// victims, that the contract allows (ExtenderPreemptionResult), and,
// beside them for the operator, each refused node with the reason.
type PreemptionResult struct {
	NodeNameToMetaVictims map[string]*MetaVictims
	Refused               []Refusal `json:"refused"`
}

// Refusal is a node taken out of a preemption, with why.
type Refusal struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}
