package service

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toposcope/toposcope/service/store"
)

// Metrics are the discovery loop's and the API requests' Prometheus
// metrics. Labels are bounded: provider and engine names, outcomes,
// results; never node names or clients.
type Metrics struct {
	discoveryDuration *prometheus.HistogramVec
	discoveries       *prometheus.CounterVec
	publishDuration   *prometheus.HistogramVec
	publishes         *prometheus.CounterVec
	changes           *prometheus.CounterVec
	graphNodes        prometheus.Gauge
	graphSwitches     prometheus.Gauge
	graphDomains      prometheus.Gauge
	uncovered         *prometheus.GaugeVec
	refusals          prometheus.Counter
	refusing          prometheus.Gauge
	requests          *prometheus.CounterVec
	queued            prometheus.Gauge
	api               providerAPIMetrics
}

// newMetrics creates the metrics and registers them on reg.
func newMetrics(reg prometheus.Registerer) (*Metrics, error) {
	buckets := prometheus.ExponentialBuckets(0.005, 3, 10) // 5ms .. ~98s
	m := &Metrics{
		discoveryDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toposcope_discovery_duration_seconds", Help: "Duration of discoveries, by provider.", Buckets: buckets,
		}, []string{"provider"}),
		discoveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toposcope_discoveries_total", Help: "Discoveries by provider and success (true or false).",
		}, []string{"provider", "success"}),
		publishDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toposcope_publish_duration_seconds", Help: "Duration of publishes, by engine.", Buckets: buckets,
		}, []string{"engine"}),
		publishes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toposcope_publishes_total", Help: "Publishes by engine and success (true or false).",
		}, []string{"engine", "success"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toposcope_publish_changes_total", Help: "Changed topologies published, by engine.",
		}, []string{"engine"}),
		graphNodes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toposcope_graph_nodes", Help: "Nodes in the current topology.",
		}),
		graphSwitches: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toposcope_graph_switches", Help: "Switches in the current topology.",
		}),
		graphDomains: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toposcope_graph_domains", Help: "Accelerator domains in the current topology.",
		}),
		uncovered: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toposcope_uncovered_nodes", Help: "Nodes of the current topology that an engine's output leaves out.",
		}, []string{"engine"}),
		refusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toposcope_shrink_guard_refusals_total", Help: "Discoveries refused by the shrink guard.",
		}),
		refusing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toposcope_shrink_guard_refusing", Help: "1 while a refused snapshot waits for an operator's accept.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toposcope_generate_requests_total", Help: "POST /v1/generate requests by result (accepted, merged, done, failed, busy).",
		}, []string{"result"}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toposcope_generate_requests_in_progress", Help: "POST /v1/generate requests accepted and not finished.",
		}),
	}
	m.api = newProviderAPIMetrics(buckets)
	for _, c := range []prometheus.Collector{
		m.api.calls, m.api.duration, m.api.throttled, m.api.unplaced, m.api.dropped,
		m.discoveryDuration, m.discoveries, m.publishDuration, m.publishes, m.changes,
		m.graphNodes, m.graphSwitches, m.graphDomains, m.uncovered, m.refusals, m.refusing, m.requests, m.queued,
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register discovery metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) discovered(provider string, seconds float64, err error) {
	m.discoveryDuration.WithLabelValues(provider).Observe(seconds)
	m.discoveries.WithLabelValues(provider, fmt.Sprint(err == nil)).Inc()
}

func (m *Metrics) published(r store.EngineResult) {
	m.publishDuration.WithLabelValues(r.Engine).Observe(r.DurationSeconds)
	m.publishes.WithLabelValues(r.Engine, fmt.Sprint(r.Error == "")).Inc()
	if r.Error == "" {
		m.changes.WithLabelValues(r.Engine).Inc()
	}
	m.uncovered.WithLabelValues(r.Engine).Set(float64(r.Uncovered))
}

func (m *Metrics) current(c store.Counts) {
	m.graphNodes.Set(float64(c.Nodes))
	m.graphSwitches.Set(float64(c.Switches))
	m.graphDomains.Set(float64(c.Domains))
}

func (m *Metrics) setRefusing(on bool) {
	if on {
		m.refusing.Set(1)
		return
	}
	m.refusing.Set(0)
}
