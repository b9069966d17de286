package extender

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
)

// GangSizes tells the pod count of a gang that a pod names through
// spec.schedulingGroup (a Kubernetes 1.37 PodGroup) when the pod carries
// no gang-size annotation.
type GangSizes interface {
	// Size returns the gang's pod count.
	Size(ctx context.Context, namespace, podGroup string) (int, error)
}

// PodGroups reads a gang's size from its PodGroup
// (scheduling.k8s.io/v1beta1): spec.schedulingPolicy.gang.minCount.
type PodGroups struct{ Core *kubeclient.Core }

// Size implements GangSizes.
func (p PodGroups) Size(ctx context.Context, namespace, name string) (int, error) {
	pg, err := p.Core.PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("%w: PodGroup %s/%s: %w", ErrPod, namespace, name, err)
	}
	if g := pg.Spec.SchedulingPolicy.Gang; g != nil && g.MinCount > 0 {
		return int(g.MinCount), nil
	}
	return 0, fmt.Errorf("%w: PodGroup %s/%s has no gang policy with a minCount", ErrPod, namespace, name)
}
