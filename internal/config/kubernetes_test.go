package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

func TestKubernetesSection(t *testing.T) {
	t.Parallel()
	f, err := config.Parse([]byte(`kubernetes:
  kubeconfig: /etc/kube/config
  watchNodes: true
  watchKeys: [example.com/*]
  leaderElection:
    enabled: true
    namespace: toposcope
    advertiseURL: http://10.0.0.7:49021
    leaseDuration: 30s
`))
	if err != nil {
		t.Fatal(err)
	}
	k := f.Kubernetes
	if !k.WatchNodes || len(k.WatchKeys) != 1 || k.WatchKeys[0] != "example.com/*" || k.Debounce != 10*time.Second ||
		k.LeaderElection.Name != "toposcope" || k.LeaderElection.LeaseDuration != 30*time.Second || k.LeaderElection.RenewDeadline != 10*time.Second {
		t.Errorf("parsed = %+v", k)
	}
	if d := config.Default().Kubernetes; d.Enabled() || d.WatchKeys != nil {
		t.Errorf("defaults = %+v; want disabled, watchKeys unset", d)
	}
}

// TestWatchKeysUnsetOrEmpty: unset or null leaves watchKeys nil (the
// service then watches what the providers declare), an empty list is
// kept empty (watch none).
func TestWatchKeysUnsetOrEmpty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		unset     bool
		want      []string
	}{
		{"no section", "", true, nil},
		{"no key", "kubernetes:\n  watchNodes: true\n", true, nil},
		{"null", "kubernetes:\n  watchKeys:\n", true, nil},
		{"empty list", "kubernetes:\n  watchKeys: []\n", false, []string{}},
		{"keys", "kubernetes:\n  watchKeys: [a.io/b, c.io/*]\n", false, []string{"a.io/b", "c.io/*"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := config.Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			got := f.Kubernetes.WatchKeys
			if (got == nil) != tc.unset || !slices.Equal(got, tc.want) {
				t.Errorf("watchKeys = %#v, want %#v (unset %v)", got, tc.want, tc.unset)
			}
		})
	}
}

func TestKubernetesSectionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, want string
	}{
		{"unknown key", "kubernetes:\n  watchNode: true\n", "kubernetes.watchNode"},
		{"bad qps", "kubernetes:\n  qps: 0\n", "kubernetes.qps"},
		{"bad key pattern", "kubernetes:\n  watchKeys: ['a*b']\n", "kubernetes.watchKeys[0]"},
		{"bad advertise URL", "kubernetes:\n  leaderElection: {advertiseURL: '10.0.0.7:80'}\n", "kubernetes.leaderElection.advertiseURL"},
		{"lease not above renew", "kubernetes:\n  leaderElection: {leaseDuration: 5s, renewDeadline: 5s}\n", "kubernetes.leaderElection.leaseDuration"},
		{"renew not above retry", "kubernetes:\n  leaderElection: {renewDeadline: 2s, retryPeriod: 2s}\n", "kubernetes.leaderElection.renewDeadline"},
		{"empty namespace", "kubernetes:\n  leaderElection: {enabled: true, namespace: ''}\n", "kubernetes.leaderElection.namespace"},
		{"negative debounce", "kubernetes:\n  debounce: -1s\n", "kubernetes.debounce"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one naming %s", err, tc.want)
			}
		})
	}
}
