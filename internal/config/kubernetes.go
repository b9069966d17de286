package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Kubernetes configures what `toposcope serve` does with the Kubernetes
// API itself, apart from the engines (the `kubernetes` section): the node
// watcher and leader election.
type Kubernetes struct {
	// Kubeconfig is a kubeconfig file; empty uses $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string `yaml:"kubeconfig"`
	// Context selects a kubeconfig context; empty uses the current one.
	Context string `yaml:"context"`
	// QPS and Burst are the client-side rate limits of the service's own
	// client (default 20 and 40; the watch and the Lease need few).
	QPS   float32 `yaml:"qps"`
	Burst int     `yaml:"burst"`
	// WatchNodes starts a Node informer that triggers a discovery when
	// nodes are added, removed, become Ready or change a watched key
	// (default false).
	WatchNodes bool `yaml:"watchNodes"`
	// WatchKeys are the label and annotation keys whose change triggers a
	// discovery; a key ending in "*" is a prefix. Unset (the default),
	// the keys that the providers declare they read (the k8s-labels
	// provider's node labels and annotations); an empty list watches
	// none. spec.providerID is always watched.
	WatchKeys []string `yaml:"watchKeys"`
	// NodeSelector restricts the watch to matching nodes (a label
	// selector; empty watches all).
	NodeSelector string `yaml:"nodeSelector"`
	// Debounce is how long the watcher gathers node events before it
	// triggers one discovery (default 10s).
	Debounce time.Duration `yaml:"debounce"`
	// LeaderElection lets several replicas share the work.
	LeaderElection LeaderElection `yaml:"leaderElection"`
}

// LeaderElection configures the coordination.k8s.io Lease that elects the
// one replica that discovers and publishes.
type LeaderElection struct {
	// Enabled turns leader election on (default false: the process is
	// always the leader).
	Enabled bool `yaml:"enabled"`
	// Namespace and Name locate the Lease (default "default" and
	// "toposcope"). In a pod, set Namespace to the pod's namespace.
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
	// AdvertiseURL is this replica's API base URL as the other replicas
	// reach it (for example http://10.0.3.7:49021); it is the Lease's
	// holder identity while this replica leads, and followers read the
	// leader's topology from it. Empty uses the listener's address.
	AdvertiseURL string `yaml:"advertiseURL"`
	// LeaseDuration is how long followers wait after the last renewal
	// before they take over (default 15s); RenewDeadline how long the
	// leader keeps trying to renew before it gives up (default 10s);
	// RetryPeriod the time between attempts (default 2s).
	LeaseDuration time.Duration `yaml:"leaseDuration"`
	RenewDeadline time.Duration `yaml:"renewDeadline"`
	RetryPeriod   time.Duration `yaml:"retryPeriod"`
	// FollowInterval is how often a follower polls the leader's
	// /v1/graph (default 10s; an unchanged graph costs a 304).
	FollowInterval time.Duration `yaml:"followInterval"`
	// PeerTokenFile holds the read token a follower sends to the leader
	// (needed when the leader's API requires tokens).
	PeerTokenFile string `yaml:"peerTokenFile"`
	// PeerCAFile is a PEM bundle trusted for the leader's HTTPS
	// certificate; empty uses the system roots.
	PeerCAFile string `yaml:"peerCAFile"`
}

// DefaultKubernetes returns the defaults of the kubernetes section.
func DefaultKubernetes() Kubernetes {
	return Kubernetes{
		QPS: 20, Burst: 40, Debounce: 10 * time.Second,
		LeaderElection: LeaderElection{
			Namespace: "default", Name: "toposcope",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			FollowInterval: 10 * time.Second,
		},
	}
}

// Enabled reports whether the service uses the Kubernetes API at all.
func (k *Kubernetes) Enabled() bool { return k.WatchNodes || k.LeaderElection.Enabled }

// Validate reports every invalid key of the section.
func (k *Kubernetes) Validate() error {
	var errs []error
	if k.QPS <= 0 {
		errs = append(errs, Errorf("qps", "must be positive, got %v", k.QPS))
	}
	if k.Burst < 1 {
		errs = append(errs, Errorf("burst", "must be at least 1, got %d", k.Burst))
	}
	if k.Debounce < 0 {
		errs = append(errs, Errorf("debounce", "must not be negative, got %s", k.Debounce))
	}
	for i, key := range k.WatchKeys {
		if strings.TrimSpace(key) == "" || strings.Contains(strings.TrimSuffix(key, "*"), "*") {
			errs = append(errs, Errorf(fmt.Sprintf("watchKeys[%d]", i), "want a key or a prefix ending in *, got %q", key))
		}
	}
	le := &k.LeaderElection
	if le.Enabled {
		if le.Namespace == "" {
			errs = append(errs, Errorf("leaderElection.namespace", "must not be empty"))
		}
		if le.Name == "" {
			errs = append(errs, Errorf("leaderElection.name", "must not be empty"))
		}
	}
	if le.AdvertiseURL != "" {
		if u, err := url.Parse(le.AdvertiseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, Errorf("leaderElection.advertiseURL", "want http(s)://host:port, got %q", le.AdvertiseURL))
		}
	}
	durations := []struct {
		key string
		v   time.Duration
	}{
		{"leaderElection.leaseDuration", le.LeaseDuration}, {"leaderElection.renewDeadline", le.RenewDeadline},
		{"leaderElection.retryPeriod", le.RetryPeriod}, {"leaderElection.followInterval", le.FollowInterval},
	}
	for _, d := range durations {
		if d.v <= 0 {
			errs = append(errs, Errorf(d.key, "must be a positive duration, got %s", d.v))
		}
	}
	// client-go's leaderelection requires these orderings.
	if le.RenewDeadline > 0 && le.LeaseDuration <= le.RenewDeadline {
		errs = append(errs, Errorf("leaderElection.leaseDuration", "must be greater than renewDeadline (%s), got %s", le.RenewDeadline, le.LeaseDuration))
	}
	if le.RetryPeriod > 0 && float64(le.RenewDeadline) <= 1.2*float64(le.RetryPeriod) {
		errs = append(errs, Errorf("leaderElection.renewDeadline", "must be greater than 1.2 × retryPeriod (%s), got %s", le.RetryPeriod, le.RenewDeadline))
	}
	return errors.Join(errs...)
}
