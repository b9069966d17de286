package podsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/placement"
)

// ErrAnnotation is wrapped when a pod's annotation cannot be read.
var ErrAnnotation = errors.New("invalid pod annotation")

// Source reads GPU pods bound to nodes.
type Source struct {
	cfg  Config
	core *kubeclient.Core
	log  *slog.Logger
}

// New returns the source reading through core.
func New(cfg Config, core *kubeclient.Core, log *slog.Logger) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Source{cfg: cfg, core: core, log: log}, nil
}

// NewFactory returns the source's registry entry.
func NewFactory() placement.SourceFactory {
	return placement.SourceFactory{
		Name:    Name,
		Summary: "GPU pods bound to nodes; account from a pod label or namespace, min runtime from an annotation",
		New: func(params *yaml.Node, prefix string, deps placement.SourceDeps) (placement.Source, error) {
			cfg := DefaultConfig()
			if err := config.Decode(params, &cfg, prefix); err != nil {
				return nil, err
			}
			clients, err := cfg.Clients()
			if err != nil {
				return nil, fmt.Errorf("%s ledger source: %w", Name, err)
			}
			return New(cfg, clients.Core, deps.Logger)
		},
		Params: config.SpecOf(DefaultConfig()),
	}
}

// Name implements placement.Source.
func (s *Source) Name() string { return Name }

// Records implements placement.Source: one paged LIST of the pods bound
// to a node (per configured namespace). Pods that request no GPUs or
// have no account are left out; a pod with an unreadable annotation
// fails the whole answer, naming the pod and the annotation.
func (s *Source) Records(ctx context.Context, now time.Time) ([]placement.Record, error) {
	namespaces := s.cfg.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var out []placement.Record
	var errs []error
	for _, ns := range namespaces {
		opts := metav1.ListOptions{FieldSelector: "spec.nodeName!=", Limit: s.cfg.PageSize}
		for {
			list, err := s.core.Pods(ns).List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("list pods: %w", err)
			}
			for i := range list.Items {
				r, ok, err := s.record(&list.Items[i], now)
				if err != nil {
					errs = append(errs, err)
				} else if ok {
					out = append(out, r)
				}
			}
			if opts.Continue = list.Continue; opts.Continue == "" {
				break
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// record converts one pod; ok is false for pods left out.
func (s *Source) record(p *corev1.Pod, now time.Time) (placement.Record, bool, error) {
	gpus := s.cfg.GPUs(&p.Spec)
	if gpus == 0 || p.Spec.NodeName == "" {
		return placement.Record{}, false, nil
	}
	acct := s.cfg.Account(p)
	if acct == "" {
		return placement.Record{}, false, nil
	}
	r := placement.Record{Account: acct, Workload: Workload(p), GPUs: gpus,
		Nodes: []string{p.Spec.NodeName}, Submit: p.CreationTimestamp.Time, Start: boundAt(p)}
	if p.Spec.Priority != nil {
		r.Priority = int(*p.Spec.Priority)
	}
	d, err := DurationAnnotation(p, s.cfg.MinRuntimeAnnotation)
	if err != nil {
		return r, false, err
	}
	r.MinRuntime, r.Allocated = d, d > 0
	if v, ok := p.Annotations[s.cfg.ResumableAnnotation]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return r, false, fmt.Errorf("%w: pod %s/%s: %s: %q is not true or false",
				ErrAnnotation, p.Namespace, p.Name, s.cfg.ResumableAnnotation, v)
		}
		r.Resumable = b
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		r.End = finishedAt(p, now)
	}
	if r.Start.After(now) {
		r.Start = now
	}
	if !r.End.IsZero() && r.End.Before(r.Start) {
		r.End = r.Start
	}
	return r, true, nil
}

// boundAt is when the pod was bound to its node: the PodScheduled
// condition, else the kubelet's start time, else its creation.
func boundAt(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return p.CreationTimestamp.Time
}

// finishedAt is when a finished pod's last container terminated, else
// now (the pod is seen finished for the first time).
func finishedAt(p *corev1.Pod, now time.Time) time.Time {
	var end time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(end) {
			end = t.FinishedAt.Time
		}
	}
	if end.IsZero() {
		return now
	}
	return end
}
