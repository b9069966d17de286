package app

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/extender"
)

// newExtender builds the kube-scheduler extender when
// placement.extender.enabled is set (nil otherwise). It reads pods as
// the kubernetes ledger source is configured to (its defaults when that
// source is not listed), so that a pod is charged to the same account
// whether it is placed or running; with that source, it also reads a
// PodGroup gang's size through the source's client.
func newExtender(cfg *config.File, svc *service.Service, log *slog.Logger) (*extender.Extender, error) {
	ext := cfg.Placement.Extender
	if !ext.Enabled {
		return nil, nil
	}
	pods := podsource.DefaultConfig()
	var gangs extender.GangSizes
	for i, s := range cfg.Placement.Sources {
		if s.Name != podsource.Name {
			continue
		}
		if err := config.Decode(&cfg.Placement.Sources[i].Params, &pods, fmt.Sprintf("placement.sources[%d].params", i)); err != nil {
			return nil, err
		}
		// The source's client reads PodGroups too (its RBAC:
		// charts/toposcope/rbac/ledger-kubernetes.yaml).
		clients, err := pods.Clients()
		if err != nil {
			return nil, fmt.Errorf("placement.extender: %w", err)
		}
		gangs = extender.PodGroups{Core: clients.Core}
	}
	if svc.Placer == nil {
		return nil, errors.New("placement.extender: the service has no placement ledger")
	}
	opts := extender.Options{Planner: svc.Placer, Config: ext, Pods: pods, Placement: placement.DefaultConfig(),
		Gangs: gangs, Logger: log.With("component", "extender")}
	if svc.Store.Shared() {
		opts.Shared = svc.Store // every replica holds a gang on one node set
	}
	return extender.New(opts)
}
