package service

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestProviderAPIMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	obs := m.Observer()
	obs.APICall("aws", 200, 10*time.Millisecond, false)
	obs.APICall("aws", 503, 5*time.Millisecond, true)
	obs.APICall("aws", 0, time.Second, false)
	obs.Unplaced("aws", 2, 3)
	obs.Unplaced("aws", 0, 1) // the last discovery counts
	want := `
# HELP toposcope_provider_api_calls_total HTTP exchanges of providers with their sources, by provider and status class (2xx, 4xx, 5xx, error).
# TYPE toposcope_provider_api_calls_total counter
toposcope_provider_api_calls_total{code="2xx",provider="aws"} 1
toposcope_provider_api_calls_total{code="5xx",provider="aws"} 1
toposcope_provider_api_calls_total{code="error",provider="aws"} 1
# HELP toposcope_provider_api_throttled_total Providers' HTTP exchanges answered 429 or 503, by provider.
# TYPE toposcope_provider_api_throttled_total counter
toposcope_provider_api_throttled_total{provider="aws"} 1
# HELP toposcope_provider_unplaced_nodes Requested nodes the provider's last discovery left unplaced, by reason (omitted: the source did not return them; no_topology).
# TYPE toposcope_provider_unplaced_nodes gauge
toposcope_provider_unplaced_nodes{provider="aws",reason="no_topology"} 1
toposcope_provider_unplaced_nodes{provider="aws",reason="omitted"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "toposcope_provider_api_calls_total",
		"toposcope_provider_api_throttled_total", "toposcope_provider_unplaced_nodes"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.api.duration); n != 1 {
		t.Fatalf("%d duration series, want 1 (per provider)", n)
	}
	var nilMetrics *Metrics
	if nilMetrics.Observer() != nil {
		t.Fatal("a nil *Metrics must give a nil Observer, not a typed nil")
	}
}
