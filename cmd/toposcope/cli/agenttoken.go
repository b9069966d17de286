package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/topology"
)

// newAgentTokenCmd mints node agents' tokens from the service's agent
// secret (server.auth.agentSecretFile): the token of node N may only
// PUT /v1/agents/N.
func newAgentTokenCmd(env *Env) *cobra.Command {
	var secretFile string
	cmd := &cobra.Command{
		Use:   "token --secret-file FILE NODE...",
		Short: "Print each node's agent token (good for PUT /v1/agents/<node> only)",
		Long: `Print the agent token of each node named (hostlist expressions such as
gpu[001-128] are expanded), one "NODE TOKEN" line each: the hex HMAC-SHA256 of
"toposcope-agent:NODE" under the secret of server.auth.agentSecretFile. Install
each token on its node only, readable by the agent alone
(/etc/toposcope/agent-token, mode 0400). The secret is never printed.`,
		Example: `  toposcope agent token --secret-file /etc/toposcope/agent-secret 'gpu[001-004]'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("%w: %s needs at least one node", ErrUsage, cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if secretFile == "" {
				return fmt.Errorf("%w: --secret-file is required", ErrUsage)
			}
			text, err := os.ReadFile(secretFile)
			if err != nil {
				return fmt.Errorf("agent secret: %w", err)
			}
			secret, err := server.ParseAgentSecret(string(text))
			if err != nil {
				return fmt.Errorf("%s: %w", secretFile, err)
			}
			var nodes []string
			for _, a := range args {
				names, err := hostlist.Expand(a)
				if err != nil {
					return fmt.Errorf("%w: node %q: %w", ErrUsage, a, err)
				}
				nodes = append(nodes, names...)
			}
			for _, n := range nodes {
				if err := topology.CheckHostName(n); err != nil {
					return fmt.Errorf("%w: %w", ErrUsage, err)
				}
			}
			for _, n := range nodes {
				fmt.Fprintf(env.Stdout, "%s %s\n", n, server.AgentToken(secret, n))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&secretFile, "secret-file", "", "the agent secret file (server.auth.agentSecretFile)")
	return cmd
}
