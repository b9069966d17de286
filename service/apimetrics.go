package service

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toposcope/toposcope/providers"
)

// providerAPIMetrics are the providers' calls to their sources and the
// nodes they leave unplaced, by provider.
type providerAPIMetrics struct {
	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	throttled *prometheus.CounterVec
	unplaced  *prometheus.GaugeVec
	dropped   *prometheus.CounterVec
}

func newProviderAPIMetrics(buckets []float64) providerAPIMetrics {
	return providerAPIMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toposcope_provider_api_calls_total",
			Help: "HTTP exchanges of providers with their sources, by provider and status class (2xx, 4xx, 5xx, error).",
		}, []string{"provider", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toposcope_provider_api_call_duration_seconds", Help: "Duration of providers' HTTP exchanges, by provider.", Buckets: buckets,
		}, []string{"provider"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toposcope_provider_api_throttled_total", Help: "Providers' HTTP exchanges answered 429 or 503, by provider.",
		}, []string{"provider"}),
		unplaced: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toposcope_provider_unplaced_nodes",
			Help: "Requested nodes the provider's last discovery left unplaced, by reason (omitted: the source did not return them; no_topology).",
		}, []string{"provider", "reason"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toposcope_provider_dropped_facts_total",
			Help: "Nodes whose facts a provider dropped instead of failing the discovery, by reason (invalid: a malformed report; fabric_conflict: a path that disagrees with the other nodes'; rack_conflict: a rack other nodes place in another NVLink domain).",
		}, []string{"provider", "reason"}),
	}
}

// Observer returns m as the providers' observer, or nil for no metrics.
func (m *Metrics) Observer() providers.Observer {
	if m == nil {
		return nil
	}
	return m
}

// APICall implements providers.Observer.
func (m *Metrics) APICall(provider string, status int, elapsed time.Duration, throttled bool) {
	code := "error"
	if status > 0 {
		code = strconv.Itoa(status/100) + "xx"
	}
	m.api.calls.WithLabelValues(provider, code).Inc()
	m.api.duration.WithLabelValues(provider).Observe(elapsed.Seconds())
	if throttled {
		m.api.throttled.WithLabelValues(provider).Inc()
	}
}

// Unplaced implements providers.Observer.
func (m *Metrics) Unplaced(provider string, omitted, noTopology int) {
	m.api.unplaced.WithLabelValues(provider, "omitted").Set(float64(omitted))
	m.api.unplaced.WithLabelValues(provider, "no_topology").Set(float64(noTopology))
}

// Dropped implements providers.DropObserver.
func (m *Metrics) Dropped(provider, reason string, n int) {
	m.api.dropped.WithLabelValues(provider, reason).Add(float64(n))
}
