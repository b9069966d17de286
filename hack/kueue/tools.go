//go:build tools

// Package tools pins sigs.k8s.io/kueue/cmd/kueue in this module's go.mod;
// hack/install-kueue.sh builds it. The build tag keeps the file out of every
// build.
package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
