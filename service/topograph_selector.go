package service

import (
	"encoding/json"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	labelsel "k8s.io/apimachinery/pkg/selection"
)

// sameSelector reports whether a request's label selector (a selector
// string, a map of labels, or a Kubernetes LabelSelector with matchLabels
// and matchExpressions, as Topograph takes it) selects what the
// operator's selector string does.
func sameSelector(req, op any) bool {
	a, errA := canonicalSelector(req)
	b, errB := canonicalSelector(op)
	return errA == nil && errB == nil && a == b
}

// canonicalSelector is the selector v as labels.Selector prints it.
func canonicalSelector(v any) (string, error) {
	if m, ok := v.(map[string]any); ok {
		_, ml := m["matchLabels"]
		_, me := m["matchExpressions"]
		if ml || me {
			data, err := json.Marshal(m)
			if err != nil {
				return "", err
			}
			var ls metav1.LabelSelector
			if err := json.Unmarshal(data, &ls); err != nil {
				return "", err
			}
			sel, err := metav1.LabelSelectorAsSelector(&ls)
			if err != nil {
				return "", err
			}
			return requirementsString(sel), nil
		}
	}
	s, err := labelSelector(v)
	if err != nil {
		return "", err
	}
	sel, err := labels.Parse(s.(string))
	if err != nil {
		return "", err
	}
	return requirementsString(sel), nil
}

// requirementsString prints sel's requirements in key order, "key in
// (v)" as "key=v", so that equal selectors written differently compare
// equal.
func requirementsString(sel labels.Selector) string {
	reqs, _ := sel.Requirements()
	parts := make([]string, 0, len(reqs))
	for _, r := range reqs {
		vals := r.ValuesUnsorted()
		slices.Sort(vals)
		op := string(r.Operator())
		switch r.Operator() {
		case labelsel.In, labelsel.Equals, labelsel.DoubleEquals:
			if len(vals) == 1 {
				op = "="
			}
		}
		parts = append(parts, r.Key()+" "+op+" "+strings.Join(vals, ","))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}
