package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/toposcope/toposcope/internal/kubeclient"
)

// NodeWatcherConfig configures a NodeWatcher.
type NodeWatcherConfig struct {
	// Keys are the label and annotation keys whose change matters; a key
	// ending in "*" is a prefix. spec.providerID always matters.
	Keys []string
	// Debounce is how long events are gathered before one Trigger; 0
	// triggers at once.
	Debounce time.Duration
	// Resync is the informer's resync period; 0 turns resync off.
	Resync time.Duration
	// Selector restricts the watch to matching nodes (a label selector;
	// empty watches all).
	Selector string
}

// NodeWatcher watches Nodes with an informer and calls Trigger, at most
// once per Debounce, when a node is added or removed, becomes Ready, or
// changes its provider ID or a watched label or annotation. The initial
// LIST triggers nothing: the service discovers at startup anyway.
type NodeWatcher struct {
	core    *kubeclient.Core
	cfg     NodeWatcherConfig
	trigger func(reason string)
	log     *slog.Logger
	synced  chan struct{}
}

// newNodeWatcher returns a watcher that calls trigger with a short reason
// ("node gpu001 added"). log may be nil.
func newNodeWatcher(core *kubeclient.Core, cfg NodeWatcherConfig, trigger func(reason string), log *slog.Logger) *NodeWatcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &NodeWatcher{core: core, cfg: cfg, trigger: trigger, log: log.With("component", "node-watcher"), synced: make(chan struct{})}
}

// Run watches until ctx is done. It returns an error only when the
// informer could not sync.
func (w *NodeWatcher) Run(ctx context.Context) error {
	nodes := w.core.Nodes()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = w.cfg.Selector
			return nodes.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = w.cfg.Selector
			return nodes.Watch(ctx, o)
		},
	}, &corev1.Node{}, w.cfg.Resync, cache.Indexers{})
	d := newDebouncer(w.cfg.Debounce, w.trigger)
	defer d.stop()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if n, ok := obj.(*corev1.Node); ok && !initial {
				d.event("node " + n.Name + " added")
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Node)
			n, ok2 := newObj.(*corev1.Node)
			if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
				return
			}
			if why := w.NodeChanged(o, n); why != "" {
				d.event("node " + n.Name + " " + why)
			}
		},
		DeleteFunc: func(obj any) {
			name := "?"
			switch n := obj.(type) {
			case *corev1.Node:
				name = n.Name
			case cache.DeletedFinalStateUnknown:
				name = n.Key
			}
			d.event("node " + name + " removed")
		},
	})
	if err != nil {
		return fmt.Errorf("node watcher: %w", err)
	}
	ictx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); inf.RunWithContext(ictx) }()
	defer func() { stop(); <-stopped }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("node watcher: %w", errNotSynced)
	}
	w.log.Info("watching nodes", "keys", len(w.cfg.Keys), "debounce", w.cfg.Debounce)
	close(w.synced)
	<-ctx.Done()
	return nil
}

// Synced is closed once Run's informer holds the initial LIST: nodes
// created after that trigger. Run once per NodeWatcher.
func (w *NodeWatcher) Synced() <-chan struct{} { return w.synced }

// NodeChanged says what about a node's update matters to discovery, or
// "" when nothing does.
func (w *NodeWatcher) NodeChanged(o, n *corev1.Node) string {
	if o.Spec.ProviderID != n.Spec.ProviderID {
		return "changed its provider ID"
	}
	if !ready(o) && ready(n) {
		return "became Ready"
	}
	if k := w.changedKey(o.Labels, n.Labels); k != "" {
		return "changed label " + k
	}
	if k := w.changedKey(o.Annotations, n.Annotations); k != "" {
		return "changed annotation " + k
	}
	return ""
}

// changedKey returns a watched key whose value differs between a and b.
func (w *NodeWatcher) changedKey(a, b map[string]string) string {
	for k, v := range a {
		if bv, ok := b[k]; (!ok || bv != v) && w.watched(k) {
			return k
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && w.watched(k) {
			return k
		}
	}
	return ""
}

func (w *NodeWatcher) watched(key string) bool {
	for _, p := range w.cfg.Keys {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(key, pre) {
				return true
			}
		} else if key == p {
			return true
		}
	}
	return false
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// debouncer calls fire once per window with the window's first reason
// (and how many more events it gathered).
type debouncer struct {
	delay time.Duration
	fire  func(string)

	mu      sync.Mutex
	timer   *time.Timer
	first   string
	more    int
	stopped bool
}

func newDebouncer(delay time.Duration, fire func(string)) *debouncer {
	return &debouncer{delay: delay, fire: fire}
}

func (d *debouncer) event(reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if d.timer != nil {
		d.more++
		return
	}
	d.first, d.more = reason, 0
	d.timer = time.AfterFunc(d.delay, d.flush)
}

func (d *debouncer) flush() {
	d.mu.Lock()
	reason, more := d.first, d.more
	d.timer = nil
	stopped := d.stopped
	d.mu.Unlock()
	if stopped {
		return
	}
	if more > 0 {
		reason = fmt.Sprintf("%s (and %d more node events)", reason, more)
	}
	d.fire(reason)
}

func (d *debouncer) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
}

// errNotSynced is returned when the informer's first LIST never completed.
var errNotSynced = errors.New("node cache did not sync")
