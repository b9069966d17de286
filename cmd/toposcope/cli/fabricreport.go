package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband"
)

// newFabricReportCmd hands ibnetdiscover's output to the service through
// the fabric report ConfigMap (infiniband provider, configMap).
func newFabricReportCmd(env *Env) *cobra.Command {
	var target, input, command, kubeconfig, node string
	cmd := &cobra.Command{
		Use:   "fabric-report --configmap NAMESPACE/NAME [--input FILE | --command CMD]",
		Short: "Write ibnetdiscover's output into the fabric report ConfigMap the infiniband provider reads",
		Long: `Run ibnetdiscover (or read its saved output with --input), check it with the
infiniband provider's parser and write it, gzip-compressed, into the fabric
report ConfigMap, for a Kubernetes cluster that has no host to run ibnetdiscover
from: the provider (params.configMap) reads it at each discovery, through the
same parser, caps and shrink guard. Output the parser refuses is an error naming
its line, and nothing is written. The ConfigMap must exist (the chart creates
it): the reporter's ServiceAccount needs only get and update on that one name.`,
		Example: `  toposcope fabric-report --configmap toposcope/toposcope-fabric
  toposcope fabric-report --configmap toposcope/toposcope-fabric --input /fabric/ibnetdiscover.out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ns, name, ok := strings.Cut(target, "/")
			if !ok || ns == "" || name == "" {
				return fmt.Errorf("%w: --configmap wants NAMESPACE/NAME, got %q", ErrUsage, target)
			}
			if input != "" && command != "" {
				return fmt.Errorf("%w: --input and --command are alternatives", ErrUsage)
			}
			output, source, err := fabricOutput(cmd, input, command)
			if err != nil {
				return err
			}
			kc := kubeclient.DefaultClientConfig()
			kc.Kubeconfig = kubeconfig
			clients, err := kc.Clients()
			if err != nil {
				return fmt.Errorf("kubernetes: %w", err)
			}
			if node == "" {
				node = os.Getenv("NODE_NAME")
			}
			if node == "" {
				node, _ = os.Hostname()
			}
			report := infiniband.ReportConfigMap{Core: clients.Core, Namespace: ns, Name: name}
			if err := report.Write(cmd.Context(), output, source, node, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "wrote %d bytes of %s into ConfigMap %s\n", len(output), source, target)
			return nil
		},
	}
	cmd.Flags().StringVar(&target, "configmap", "", "the fabric report ConfigMap, NAMESPACE/NAME")
	cmd.Flags().StringVar(&input, "input", "", "a file of saved ibnetdiscover output, instead of running the command")
	cmd.Flags().StringVar(&command, "command", "", `the command that prints the fabric (default "ibnetdiscover"; split at spaces, run without a shell)`)
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "a kubeconfig file (default $KUBECONFIG, ~/.kube/config, then the in-cluster ServiceAccount)")
	cmd.Flags().StringVar(&node, "node", "", "the node the output is taken on, for the ConfigMap's annotation (default $NODE_NAME, then the host name)")
	return cmd
}

// fabricOutput reads --input or runs --command (ibnetdiscover by
// default), at most providers.MaxSourceBytes, and names the source.
func fabricOutput(cmd *cobra.Command, input, command string) ([]byte, string, error) {
	if input != "" {
		data, err := bounded.ReadFile(input, providers.MaxSourceBytes)
		return data, input, err
	}
	argv := config.Command{"ibnetdiscover"}
	if command != "" {
		var err error
		if argv, err = config.ParseCommand(command); err != nil {
			return nil, "", fmt.Errorf("%w: --command: %w", ErrUsage, err)
		}
	}
	out, err := infiniband.ExecRunner{}.Run(cmd.Context(), argv)
	if err != nil {
		return nil, "", fmt.Errorf("command %q: %w", argv.String(), err)
	}
	return out, fmt.Sprintf("command %q", argv.String()), nil
}
