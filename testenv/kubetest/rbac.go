package kubetest

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Rules are the rules of the ClusterRoles and Roles of an RBAC YAML file.
type Rules struct {
	// Cluster are the rules of every ClusterRole, Namespace those of every
	// Role.
	Cluster, Namespace []rbacv1.PolicyRule
}

// LoadRules reads the ClusterRoles and Roles of a YAML file (such as
// charts/toposcope/rbac/k8s-labels.yaml).
func LoadRules(path string) (Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Rules{}, fmt.Errorf("kubetest: %w", err)
	}
	objs, err := DecodeYAML(data)
	if err != nil {
		return Rules{}, fmt.Errorf("%s: %w", path, err)
	}
	var r Rules
	for _, o := range objs {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return Rules{}, fmt.Errorf("kubetest: %w", err)
		}
		switch o.GetKind() {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			if err := json.Unmarshal(raw, &cr); err != nil {
				return Rules{}, fmt.Errorf("%s: ClusterRole %s: %w", path, o.GetName(), err)
			}
			r.Cluster = append(r.Cluster, cr.Rules...)
		case "Role":
			var role rbacv1.Role
			if err := json.Unmarshal(raw, &role); err != nil {
				return Rules{}, fmt.Errorf("%s: Role %s: %w", path, o.GetName(), err)
			}
			r.Namespace = append(r.Namespace, role.Rules...)
		default:
			return Rules{}, fmt.Errorf("kubetest: %s: unexpected %s %s", path, o.GetKind(), o.GetName())
		}
	}
	return r, nil
}

// Unused returns each verb × resource × name of the rules that no access
// exercised, as "verb group/resource[/name]": a permission the engine never
// needed. Cluster rules match accesses without a namespace, namespace rules
// accesses with one.
func (r Rules) Unused(accesses []Access) []string {
	var out []string
	check := func(rules []rbacv1.PolicyRule, namespaced bool) {
		for _, rule := range rules {
			names := rule.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, verb := range rule.Verbs {
				for _, res := range rule.Resources {
					for _, name := range names {
						used := slices.ContainsFunc(accesses, func(a Access) bool {
							return (a.Namespace != "") == namespaced && a.Verb == verb && slices.Contains(rule.APIGroups, a.Group) &&
								resourceOf(a) == res && (name == "" || a.Name == name)
						})
						if !used {
							s := verb + " " + groupOf(rule) + "/" + res
							if name != "" {
								s += "/" + name
							}
							out = append(out, s)
						}
					}
				}
			}
		}
	}
	check(r.Cluster, false)
	check(r.Namespace, true)
	return out
}

func resourceOf(a Access) string {
	if a.Subresource != "" {
		return a.Resource + "/" + a.Subresource
	}
	return a.Resource
}

func groupOf(rule rbacv1.PolicyRule) string {
	if len(rule.APIGroups) == 0 || rule.APIGroups[0] == "" {
		return "core"
	}
	return rule.APIGroups[0]
}
