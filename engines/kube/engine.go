// Package kube is the kit of toposcope's Kubernetes engines (k8s-labels,
// slinky, kueue, kai, nfd, volcano, kueue-budgets): label keys and label-value sanitizing, matching
// Kubernetes Nodes to the nodes of a graph, the minimal-write node
// synchronizer, the shrink guard, the publish modes and the result of a
// publish (what changed, what was left alone and why).
package kube

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// ClientsFor builds the clients of an engine from its configuration; in
// ModePrint, which contacts no cluster, it returns no clients and reads no
// kubeconfig.
func ClientsFor(cc *kubeclient.ClientConfig, mode string) (kubeclient.Clients, error) {
	if mode == ModePrint {
		return kubeclient.Clients{}, nil
	}
	return cc.Clients()
}

// ErrNoClient is wrapped when an engine is built without the Kubernetes
// client its mode needs.
var ErrNoClient = errors.New("needs a Kubernetes client")

// RequireClients returns ErrNoClient, naming the engine and the mode,
// when a mode other than ModePrint is given a nil client.
func RequireClients(name, mode string, clients ...any) error {
	if mode == ModePrint {
		return nil
	}
	for _, c := range clients {
		if isNil(c) {
			return fmt.Errorf("%s: mode %s %w", name, mode, ErrNoClient)
		}
	}
	return nil
}

// isNil says whether c is nil, or a nil pointer or interface value in c
// (a nil *kubeclient.Core is not a nil any).
func isNil(c any) bool {
	if c == nil {
		return true
	}
	switch v := reflect.ValueOf(c); v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// EngineClients builds the clients of an engine's factory: when the
// engine will only render (deps.RenderOnly) it sets *mode to ModePrint,
// which needs no client; otherwise it is ClientsFor.
func EngineClients(cc *kubeclient.ClientConfig, mode *string, deps engines.Deps) (kubeclient.Clients, error) {
	if deps.RenderOnly {
		*mode = ModePrint
	}
	return ClientsFor(cc, *mode)
}

// Engine is what Publish needs of a Kubernetes engine.
type Engine interface {
	Applier
	engines.Renderer
}

// Publish is the Publish of every Kubernetes engine. ModePrint writes the
// engine's Render to deps.Stdout; ModeDryRun plans against the cluster and
// writes the summary and every change; ModeApply applies and writes the
// summary line. The summary is also logged. opts (the service's guard,
// if any) are passed on to Apply with the mode's DryRun.
func Publish(ctx context.Context, name, mode string, e Engine, g *topology.Graph, deps engines.Deps, opts ApplyOptions) error {
	if mode == ModePrint {
		doc, err := e.Render(ctx, g)
		if err != nil {
			return err
		}
		if _, err := deps.Stdout.Write(doc); err != nil {
			return fmt.Errorf("%s: write to stdout: %w", name, err)
		}
		return nil
	}
	opts.DryRun = mode == ModeDryRun
	res, err := e.Apply(ctx, g, opts)
	if res != nil {
		log := deps.Logger.With("changed", res.Changed, "unchanged", res.Unchanged, "refused", len(res.Refused), "dryRun", res.DryRun)
		for _, w := range res.Warnings {
			log.WarnContext(ctx, name+": "+w)
		}
		if err == nil {
			log.InfoContext(ctx, name+": published")
			if werr := res.WriteTo(deps.Stdout, res.DryRun); werr != nil {
				return fmt.Errorf("%s: write to stdout: %w", name, werr)
			}
		}
	}
	if err != nil {
		deps.Logger.ErrorContext(ctx, name+": publish failed", "error", err)
		return err
	}
	return nil
}
