package service

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// kubernetesRoles returns what the leader runs (the discovery loop and,
// with kubernetes.watchNodes, the node watcher, watching
// kubernetes.watchKeys or, when unset, defaultKeys) and how it comes to
// run: at once, or, with kubernetes.leaderElection.enabled, while this
// replica holds the Lease (following the leader's topology otherwise).
func kubernetesRoles(cfg *config.File, defaultKeys []string, addr net.Addr, loop *Loop, log *slog.Logger) (
	lead func(context.Context), campaign func(context.Context, func(context.Context)), err error,
) {
	kc := cfg.Kubernetes
	lead = func(ctx context.Context) { loop.Run(ctx) }
	campaign = func(ctx context.Context, lead func(context.Context)) { lead(ctx) }
	if !kc.Enabled() {
		return lead, campaign, nil
	}
	cc := kubeclient.ClientConfig{Kubeconfig: kc.Kubeconfig, Context: kc.Context, QPS: kc.QPS, Burst: kc.Burst}
	rc, err := cc.RESTConfig()
	if err != nil {
		return nil, nil, &config.FieldError{Field: "kubernetes.kubeconfig", Err: err}
	}
	rc.Timeout = 0 // a watch lasts; each request has its own deadline
	clients, err := kubeclient.NewClients(rc)
	if err != nil {
		return nil, nil, err
	}
	if kc.WatchNodes {
		keys := kc.WatchKeys
		if keys == nil {
			keys = defaultKeys
		}
		w := newNodeWatcher(clients.Core, NodeWatcherConfig{
			Keys: keys, Debounce: kc.Debounce, Selector: kc.NodeSelector,
		},
			func(reason string) {
				log.Info("node change: discovering", "change", reason)
				loop.Trigger(TriggerNodes)
			}, log)
		lead = func(ctx context.Context) {
			var wg sync.WaitGroup
			wg.Go(func() {
				if err := w.Run(ctx); err != nil {
					log.Error("node watcher stopped", "err", err)
				}
			})
			loop.Run(ctx)
			wg.Wait()
		}
	}
	le := kc.LeaderElection
	if !le.Enabled {
		return lead, campaign, nil
	}
	identity, err := advertiseURL(cfg, addr)
	if err != nil {
		return nil, nil, err
	}
	token := ""
	if le.PeerTokenFile != "" {
		data, err := os.ReadFile(le.PeerTokenFile)
		if err != nil {
			return nil, nil, &config.FieldError{Field: "kubernetes.leaderElection.peerTokenFile", Err: err}
		}
		token = strings.TrimSpace(string(data))
	}
	hc, err := PeerClient(le.PeerCAFile)
	if err != nil {
		return nil, nil, &config.FieldError{Field: "kubernetes.leaderElection.peerCAFile", Err: err}
	}
	follow := newFollower(FollowerConfig{Interval: le.FollowInterval, Token: token, Client: hc}, loop.Adopt, log).Run
	if loop.deps.Store.Shared() {
		// Followers read the leader's topology from the shared store (the
		// refresher), not from the leader's API.
		follow = func(ctx context.Context, _ string) { <-ctx.Done() }
	}
	elector, err := newElector(clients.Core, ElectorConfig{
		Namespace: le.Namespace, Name: le.Name, Identity: identity,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
	}, log)
	if err != nil {
		return nil, nil, err
	}
	log.Info("leader election", "lease", le.Namespace+"/"+le.Name, "identity", identity)
	campaign = func(ctx context.Context, lead func(context.Context)) {
		if err := elector.Run(ctx, lead, follow); err != nil {
			log.Error("leader election stopped", "err", err)
		}
	}
	return lead, campaign, nil
}

// advertiseURL is kubernetes.leaderElection.advertiseURL, or the
// listener's URL when it listens on a specific address.
func advertiseURL(cfg *config.File, addr net.Addr) (string, error) {
	if u := cfg.Kubernetes.LeaderElection.AdvertiseURL; u != "" {
		return strings.TrimRight(u, "/"), nil
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		return "", config.Errorf("kubernetes.leaderElection.advertiseURL",
			"must be set when server.listen (%s) is not one specific address: followers read the leader's topology from it", addr)
	}
	scheme := "http"
	if cfg.Server.TLS.Enabled() {
		scheme = "https"
	}
	return scheme + "://" + tcp.String(), nil
}
