package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// TestServeRBAC runs the node watcher and the leader election with a
// ServiceAccount token bound to exactly charts/toposcope/rbac/serve.yaml: each works,
// and every granted verb is used.
func TestServeRBAC(t *testing.T) {
	t.Parallel()
	rules, err := kubetest.LoadRules("../charts/toposcope/rbac/serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := env.Require(t)
	ns := c.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc, err := c.ServiceAccountConfig(ctx, ns, "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	counter := kubetest.NewCounter()
	clients, err := kubeclient.NewClients(counter.Instrument(rc))
	if err != nil {
		t.Fatal(err)
	}
	core := clients.Core

	wctx, stopWatch := context.WithCancel(ctx)
	w := service.NewNodeWatcher(core, service.NodeWatcherConfig{Keys: app.WatchKeys(app.Registry())}, func(string) {}, nil)
	watched := make(chan error, 1)
	go func() { watched <- w.Run(wctx) }()
	select {
	case <-w.Synced():
	case err := <-watched:
		t.Fatalf("node watcher as the ServiceAccount: %v", err)
	case <-ctx.Done():
		t.Fatal("the node watcher did not sync")
	}

	def := config.DefaultKubernetes().LeaderElection
	el, err := service.NewElector(core, service.ElectorConfig{
		Namespace: ns, Name: def.Name, Identity: "http://127.0.0.1:1",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ectx, stopElection := context.WithCancel(ctx)
	renewed := make(chan struct{})
	elected := make(chan error, 1)
	go func() {
		elected <- el.Run(ectx, func(lctx context.Context) {
			// Lead through at least one renewal (a get and an update).
			select {
			case <-time.After(2 * time.Second):
				close(renewed)
			case <-lctx.Done():
			}
			<-lctx.Done()
		}, func(context.Context, string) {})
	}()
	select {
	case <-renewed:
	case <-ctx.Done():
		t.Fatal("the ServiceAccount never led")
	}
	stopElection() // releases the Lease (an update)
	if err := <-elected; err != nil {
		t.Fatal(err)
	}
	stopWatch()
	if err := <-watched; err != nil {
		t.Fatal(err)
	}
	if unused := rules.Unused(counter.Accesses()); len(unused) > 0 {
		t.Errorf("charts/toposcope/rbac/serve.yaml grants permissions serve never used: %v", unused)
	}
}
