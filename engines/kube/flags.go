package kube

import "github.com/toposcope/toposcope/internal/config"

// CLIFlags are the command-line flags of every Kubernetes engine (each
// Config's config.Flagged): the kubeconfig, and a dry run.
func CLIFlags() []config.Flag {
	return []config.Flag{
		{Name: "kubeconfig", Key: "kubeconfig", Usage: "kubeconfig file (default: in-cluster, then $KUBECONFIG)"},
		{Name: "dry-run", Key: "mode", Bool: true, Value: ModeDryRun, Usage: "print the changes without writing"},
	}
}
