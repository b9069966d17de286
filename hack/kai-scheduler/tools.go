//go:build tools

// Package tools pins github.com/NVIDIA/KAI-scheduler/cmd/scheduler in this
// module's go.mod; hack/install-kai.sh builds it. The build tag keeps the
// file out of every build.
package tools

import _ "github.com/NVIDIA/KAI-scheduler/cmd/scheduler"
