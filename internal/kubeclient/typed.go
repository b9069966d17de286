package kubeclient

import (
	"context"
	"fmt"
	"net/http"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// Core is the typed client of the built-in objects toposcope reads and
// writes: Nodes, ConfigMaps, Pods, Leases, ResourceSlices and PodGroups.
//
// It knows only those kinds. client-go's full clientset registers every
// built-in kind of every API group when its package initialises, which
// every command of the binary paid at start-up (8.6 ms), whether or not
// it ever talked to Kubernetes; this client makes its small scheme when
// it is built.
type Core struct {
	core, coordination, resource, scheduling rest.Interface
	params                                   runtime.ParameterCodec
}

// coreGroup is one group version Core reaches: its API path and what
// registers its kinds.
type coreGroup struct {
	gv   schema.GroupVersion
	path string
	add  func(*runtime.Scheme) error
}

// coreGroups lists Core's group versions, in the order of its fields.
func coreGroups() []coreGroup {
	return []coreGroup{
		{corev1.SchemeGroupVersion, "/api", corev1.AddToScheme},
		{coordinationv1.SchemeGroupVersion, "/apis", coordinationv1.AddToScheme},
		{resourcev1.SchemeGroupVersion, "/apis", resourcev1.AddToScheme},
		{schedulingv1beta1.SchemeGroupVersion, "/apis", schedulingv1beta1.AddToScheme},
	}
}

// newCore builds a Core on rc (content types included) sharing hc.
func newCore(rc *rest.Config, hc *http.Client) (*Core, error) {
	groups := coreGroups()
	scheme := runtime.NewScheme()
	for _, g := range groups {
		if err := g.add(scheme); err != nil {
			return nil, fmt.Errorf("register %s: %w", g.gv, err)
		}
	}
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	clients := make([]rest.Interface, len(groups))
	for i, g := range groups {
		c := rest.CopyConfig(rc)
		gv := g.gv
		c.GroupVersion, c.APIPath, c.NegotiatedSerializer = &gv, g.path, codecs
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		client, err := rest.RESTClientForConfigAndClient(c, hc)
		if err != nil {
			return nil, fmt.Errorf("%s client: %w", g.gv, err)
		}
		clients[i] = client
	}
	return &Core{core: clients[0], coordination: clients[1], resource: clients[2], scheduling: clients[3],
		params: runtime.NewParameterCodec(scheme)}, nil
}

// Nodes reaches the cluster's Nodes.
func (c *Core) Nodes() Resource[corev1.Node, *corev1.Node, corev1.NodeList, *corev1.NodeList] {
	return Resource[corev1.Node, *corev1.Node, corev1.NodeList, *corev1.NodeList]{c.core, c.params, "nodes", ""}
}

// ConfigMaps reaches the ConfigMaps of namespace ns.
func (c *Core) ConfigMaps(ns string) Resource[corev1.ConfigMap, *corev1.ConfigMap, corev1.ConfigMapList, *corev1.ConfigMapList] {
	return Resource[corev1.ConfigMap, *corev1.ConfigMap, corev1.ConfigMapList, *corev1.ConfigMapList]{c.core, c.params, "configmaps", ns}
}

// Pods reaches the Pods of namespace ns ("" for every namespace).
func (c *Core) Pods(ns string) Resource[corev1.Pod, *corev1.Pod, corev1.PodList, *corev1.PodList] {
	return Resource[corev1.Pod, *corev1.Pod, corev1.PodList, *corev1.PodList]{c.core, c.params, "pods", ns}
}

// Leases reaches the coordination.k8s.io Leases of namespace ns.
func (c *Core) Leases(ns string) Resource[coordinationv1.Lease, *coordinationv1.Lease, coordinationv1.LeaseList, *coordinationv1.LeaseList] {
	return Resource[coordinationv1.Lease, *coordinationv1.Lease, coordinationv1.LeaseList, *coordinationv1.LeaseList]{c.coordination, c.params, "leases", ns}
}

// ResourceSlices reaches the cluster's resource.k8s.io ResourceSlices.
func (c *Core) ResourceSlices() Resource[resourcev1.ResourceSlice, *resourcev1.ResourceSlice, resourcev1.ResourceSliceList, *resourcev1.ResourceSliceList] {
	return Resource[resourcev1.ResourceSlice, *resourcev1.ResourceSlice, resourcev1.ResourceSliceList, *resourcev1.ResourceSliceList]{c.resource, c.params, "resourceslices", ""}
}

// PodGroups reaches the scheduling.k8s.io PodGroups of namespace ns.
func (c *Core) PodGroups(ns string) Resource[schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroup, schedulingv1beta1.PodGroupList, *schedulingv1beta1.PodGroupList] {
	return Resource[schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroup, schedulingv1beta1.PodGroupList, *schedulingv1beta1.PodGroupList]{c.scheduling, c.params, "podgroups", ns}
}

// object is a pointer to an API object type T.
type object[T any] interface {
	*T
	runtime.Object
}

// Resource is a typed client of one kind of object (T, listed as L) in
// one namespace, or cluster-wide when the namespace is empty. Its methods
// have client-go's typed clients' signatures.
type Resource[T any, PT object[T], L any, PL object[L]] struct {
	client    rest.Interface
	params    runtime.ParameterCodec
	resource  string
	namespace string
}

// request aims req at the resource, in its namespace when it has one.
func (r Resource[T, PT, L, PL]) request(req *rest.Request) *rest.Request {
	return req.NamespaceIfScoped(r.namespace, r.namespace != "").Resource(r.resource)
}

// Get reads the named object.
func (r Resource[T, PT, L, PL]) Get(ctx context.Context, name string, opts metav1.GetOptions) (PT, error) {
	out := PT(new(T))
	if err := r.request(r.client.Get()).Name(name).VersionedParams(&opts, r.params).Do(ctx).Into(out); err != nil {
		return nil, err
	}
	return out, nil
}

// List reads one page of the objects opts selects.
func (r Resource[T, PT, L, PL]) List(ctx context.Context, opts metav1.ListOptions) (PL, error) {
	out := PL(new(L))
	if err := r.request(r.client.Get()).VersionedParams(&opts, r.params).Do(ctx).Into(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Watch watches the objects opts selects.
func (r Resource[T, PT, L, PL]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.request(r.client.Get()).VersionedParams(&opts, r.params).Watch(ctx)
}

// Create creates obj and returns what the server stored.
func (r Resource[T, PT, L, PL]) Create(ctx context.Context, obj PT, opts metav1.CreateOptions) (PT, error) {
	out := PT(new(T))
	if err := r.request(r.client.Post()).VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Update replaces the object obj names (an optimistic write: it fails
// with a conflict when obj's resourceVersion is not the stored one).
func (r Resource[T, PT, L, PL]) Update(ctx context.Context, obj PT, opts metav1.UpdateOptions) (PT, error) {
	meta, ok := any(obj).(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("update %s: object has no metadata", r.resource)
	}
	out := PT(new(T))
	if err := r.request(r.client.Put()).Name(meta.GetName()).VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Patch applies a patch of type pt to the named object, or to one of its
// subresources.
func (r Resource[T, PT, L, PL]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (PT, error) {
	out := PT(new(T))
	if err := r.request(r.client.Patch(pt)).Name(name).SubResource(subresources...).
		VersionedParams(&opts, r.params).Body(data).Do(ctx).Into(out); err != nil {
		return nil, err
	}
	return out, nil
}
