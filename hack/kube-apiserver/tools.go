//go:build tools

// Package tools pins k8s.io/kubernetes/cmd/kube-apiserver and
// k8s.io/kubernetes/cmd/kube-scheduler in this module's go.mod;
// hack/install-kube.sh builds both. The build tag keeps the file out
// of every build.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
