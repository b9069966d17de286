package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// DecodeYAML splits a multi-document YAML (or JSON) stream into objects,
// skipping empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("kubetest: decode YAML: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// InstallCRDs creates the CustomResourceDefinitions in the YAML files
// (already existing ones are left as they are) and waits until each is
// Established.
func (c *Cluster) InstallCRDs(ctx context.Context, files ...string) error {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
		objs, err := DecodeYAML(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				return fmt.Errorf("kubetest: %s: %s %s is not a CustomResourceDefinition", f, o.GetKind(), o.GetName())
			}
			_, err := c.dyn.Resource(crdGVR).Create(ctx, o, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("kubetest: create CRD %s: %w", o.GetName(), err)
			}
			if err := c.waitEstablished(ctx, o.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Cluster) waitEstablished(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		o, err := c.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("kubetest: CRD %s not established: %w", name, err)
	}
	return nil
}

// mapper maps kinds to resources from the apiserver's discovery.
func (c *Cluster) mapper() (meta.RESTMapper, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(c.admin)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, fmt.Errorf("kubetest: discovery: %w", err)
	}
	return restmapper.NewDiscoveryRESTMapper(groups), nil
}

// Missing returns "Kind namespace/name" of each object of a YAML stream
// that the apiserver does not hold (namespaced ones looked up in
// namespace unless they name their own).
func (c *Cluster) Missing(ctx context.Context, data []byte, namespace string) ([]string, error) {
	objs, err := DecodeYAML(data)
	if err != nil {
		return nil, err
	}
	mapper, err := c.mapper()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("kubetest: %s: %w", gvk, err)
		}
		var ri dynamic.ResourceInterface = c.dyn.Resource(m.Resource)
		ns := ""
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if ns = o.GetNamespace(); ns == "" {
				ns = namespace
			}
			ri = c.dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{}); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("kubetest: get %s %s: %w", gvk.Kind, o.GetName(), err)
			}
			missing = append(missing, gvk.Kind+" "+ns+"/"+o.GetName())
		}
	}
	return missing, nil
}

// Apply creates every object of a YAML stream, namespaced ones in
// namespace unless they name their own.
func (c *Cluster) Apply(ctx context.Context, data []byte, namespace string) error {
	objs, err := DecodeYAML(data)
	if err != nil {
		return err
	}
	mapper, err := c.mapper()
	if err != nil {
		return err
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("kubetest: %s: %w", gvk, err)
		}
		ri := c.dyn.Resource(m.Resource)
		var err2 error
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := o.GetNamespace()
			if ns == "" {
				ns = namespace
			}
			_, err2 = ri.Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
		} else {
			_, err2 = ri.Create(ctx, o, metav1.CreateOptions{})
		}
		if err2 != nil {
			return fmt.Errorf("kubetest: create %s %s: %w", gvk.Kind, o.GetName(), err2)
		}
	}
	return nil
}

// ServiceAccountConfig creates ServiceAccount name in namespace, grants it
// clusterRules through a ClusterRole and ClusterRoleBinding and
// namespaceRules through a Role and RoleBinding in namespace (either may be
// empty), waits until RBAC enforces them, and returns a client
// configuration that authenticates with a token of that ServiceAccount
// only. Role names are namespace + "-" + name, so parallel tests do not
// collide.
func (c *Cluster) ServiceAccountConfig(ctx context.Context, namespace, name string, clusterRules, namespaceRules []rbacv1.PolicyRule) (*rest.Config, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := c.core.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("kubetest: create service account: %w", err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}
	roleName := namespace + "-" + name
	rbac := c.core.RbacV1()
	if len(clusterRules) > 0 {
		if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Rules: clusterRules}, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("kubetest: create cluster role: %w", err)
		}
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}}
		if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("kubetest: create cluster role binding: %w", err)
		}
	}
	if len(namespaceRules) > 0 {
		if _, err := rbac.Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Rules: namespaceRules}, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("kubetest: create role: %w", err)
		}
		b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName}}
		if _, err := rbac.RoleBindings(namespace).Create(ctx, b, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("kubetest: create role binding: %w", err)
		}
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	for _, r := range clusterRules {
		if err := c.WaitAllowed(ctx, user, "", r); err != nil {
			return nil, err
		}
	}
	for _, r := range namespaceRules {
		if err := c.WaitAllowed(ctx, user, namespace, r); err != nil {
			return nil, err
		}
	}
	return c.ServiceAccountToken(ctx, namespace, name, nil)
}

// ServiceAccountToken requests a token of an existing ServiceAccount (the
// TokenRequest API), bound to a Pod when bound is set (the token then
// carries the Pod's node name, as a kubelet-mounted token does), and
// returns a client configuration that authenticates with it only.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string, bound *authenticationv1.BoundObjectReference) (*rest.Config, error) {
	exp := int64(3600)
	tr, err := c.core.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp, BoundObjectRef: bound}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubetest: token for %s/%s: %w", namespace, name, err)
	}
	return c.config(tr.Status.Token), nil
}

// WaitAllowed polls SubjectAccessReview until the first verb of rule is
// allowed for user: the RBAC authorizer sees new bindings a moment later.
func (c *Cluster) WaitAllowed(ctx context.Context, user, namespace string, rule rbacv1.PolicyRule) error {
	if len(rule.Verbs) == 0 || len(rule.Resources) == 0 {
		return nil
	}
	attrs := &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: rule.Verbs[0], Resource: rule.Resources[0]}
	if len(rule.APIGroups) > 0 {
		attrs.Group = rule.APIGroups[0]
	}
	if len(rule.ResourceNames) > 0 {
		attrs.Name = rule.ResourceNames[0]
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}, ResourceAttributes: attrs}}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := c.core.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return r.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("kubetest: %s never allowed %s %s: %w", user, attrs.Verb, attrs.Resource, err)
	}
	return nil
}

// CreateNodes creates the nodes with up to conc requests in flight.
func (c *Cluster) CreateNodes(ctx context.Context, nodes []*corev1.Node, conc int) error {
	conc = max(1, min(conc, len(nodes)))
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan *corev1.Node)
	for range conc {
		wg.Go(func() {
			for n := range next {
				if _, err := c.core.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("kubetest: create node %s: %w", n.Name, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, n := range nodes {
		next <- n
	}
	close(next)
	wg.Wait()
	return first
}
