package kube_test

import (
	"errors"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// TestRequireClients: every mode but print needs each client it is
// given; a missing one is ErrNoClient naming the engine and the mode.
func TestRequireClients(t *testing.T) {
	t.Parallel()
	var none kubernetes.Interface
	some := kubernetes.Interface(fake.NewClientset())
	for _, tc := range []struct {
		mode    string
		clients []any
		want    string
	}{
		{kube.ModePrint, []any{none}, ""},
		{kube.ModeApply, []any{some}, ""},
		{kube.ModeApply, []any{none}, "e: mode apply needs a Kubernetes client"},
		{kube.ModeDryRun, []any{some, kubeclient.Clients{}.Dynamic}, "e: mode dry-run needs a Kubernetes client"},
	} {
		err := kube.RequireClients("e", tc.mode, tc.clients...)
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, kube.ErrNoClient) || err.Error() != tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.mode, tc.clients, err, tc.want)
		}
	}
}
