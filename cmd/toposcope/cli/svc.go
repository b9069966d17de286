package cli

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service/store"
)

// snapshotsAnswer is GET /v1/snapshots.
type snapshotsAnswer struct {
	Current   uint64           `json:"current"`
	Pending   uint64           `json:"pending"`
	Snapshots []store.Snapshot `json:"snapshots"`
}

// acceptAnswer is POST /v1/snapshots/{id}/accept.
type acceptAnswer struct {
	Snapshot *store.Snapshot `json:"snapshot"`
	Run      *store.Run      `json:"run"`
}

// getAndPrint GETs path from the service into a T and prints it in the
// output format asked for: as data (json, yaml) or with table (wide or
// not).
func getAndPrint[T any](cmd *cobra.Command, w io.Writer, svc *serviceFlags, out *outputFlags, path string, table func(v *T, wide bool) error) error {
	format, err := out.resolve(cmd)
	if err != nil {
		return err
	}
	c, ctx, cancel, err := svc.client(cmd)
	if err != nil {
		return err
	}
	defer cancel()
	var v T
	if err := c.do(ctx, "GET", path, nil, &v); err != nil {
		return err
	}
	if format == outJSON || format == outYAML {
		return writeData(w, format, v)
	}
	return table(&v, format == outWide)
}

func newStatusCmd(env *Env) *cobra.Command {
	var svc *serviceFlags
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a running service's provider, current and pending snapshots and last discovery",
		Long: `Show what a running service holds (GET /v1/status): its provider and
engines, the current snapshot, the snapshot the shrink guard refused
(pending) with the command that accepts it, and the last discovery run.`,
		Example: `  toposcope status
  toposcope status --server https://head01:49021 --token-file /etc/toposcope/read.token -o yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return getAndPrint(cmd, env.Stdout, svc, out, "/v1/status", func(st *server.Status, wide bool) error {
				return writeStatus(env.Stdout, st, wide)
			})
		},
	}
	svc = addServiceFlags(cmd, "read", 30*time.Second)
	out = addOutputFlags(cmd, " (wide adds the snapshots' digests and each engine's publish result)", outTable, outWide, outJSON, outYAML)
	return cmd
}

// writeStatus prints GET /v1/status as lines of text.
func writeStatus(w io.Writer, st *server.Status, wide bool) error {
	engines := strings.Join(st.Engines, ", ")
	if engines == "" {
		engines = "none"
	}
	fmt.Fprintf(w, "provider: %s\nengines:  %s\nready:    %v\n", st.Provider, engines, st.Ready)
	snap := func(label string, s *store.Snapshot) {
		if s == nil {
			fmt.Fprintf(w, "%s none\n", label)
			return
		}
		fmt.Fprintf(w, "%s snapshot %d (%s, %d nodes, %d switches, %d domains, %s)", label, s.ID, s.Status,
			s.Counts.Nodes, s.Counts.Switches, s.Counts.Domains, s.CreatedAt.UTC().Format(time.RFC3339))
		if wide {
			fmt.Fprintf(w, " digest %s", s.Digest)
		}
		fmt.Fprintln(w)
		if s.Reason != "" {
			fmt.Fprintf(w, "          reason: %s\n", s.Reason)
		}
	}
	snap("current: ", st.Current)
	snap("pending: ", st.Pending)
	if st.Pending != nil {
		fmt.Fprintf(w, "          the current topology stays and nothing is published until it is accepted:\n"+
			"          toposcope diff %d   (what would change)\n          toposcope accept %d\n", st.Pending.ID, st.Pending.ID)
	}
	if r := st.LastRun; r != nil {
		fmt.Fprintf(w, "last run: %d (%s, %s, %s)", r.ID, r.Trigger, r.Outcome, r.FinishedAt.UTC().Format(time.RFC3339))
		if r.Error != "" {
			fmt.Fprintf(w, ": %s", r.Error)
		}
		fmt.Fprintln(w)
		if wide {
			for _, e := range r.Engines {
				fmt.Fprintf(w, "          engine %+v\n", e)
			}
		}
	}
	return nil
}

func newSnapshotsCmd(env *Env) *cobra.Command {
	var svc *serviceFlags
	var out *outputFlags
	var limit int
	cmd := &cobra.Command{
		Use:   "snapshots",
		Short: "List a running service's topology snapshots, newest first",
		Example: `  toposcope snapshots
  toposcope snapshots --limit 5 -o wide`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return getAndPrint(cmd, env.Stdout, svc, out, "/v1/snapshots?limit="+strconv.Itoa(limit), func(a *snapshotsAnswer, wide bool) error {
				return writeSnapshots(env.Stdout, a, wide)
			})
		},
	}
	svc = addServiceFlags(cmd, "read", 30*time.Second)
	cmd.Flags().IntVar(&limit, "limit", 20, "list at most this many (1-1000)")
	out = addOutputFlags(cmd, " (wide adds the trigger, the digest and the reason)", outTable, outWide, outJSON, outYAML)
	return cmd
}

// writeSnapshots prints the snapshot list as a table.
func writeSnapshots(w io.Writer, a *snapshotsAnswer, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tCREATED\tSTATUS\tNODES\tSWITCHES\tDOMAINS\tCHANGES\tHEAD"
	if wide {
		head += "\tTRIGGER\tDIGEST\tREASON"
	}
	fmt.Fprintln(tw, head)
	for _, s := range a.Snapshots {
		mark := ""
		switch s.ID {
		case a.Current:
			mark = "current"
		case a.Pending:
			mark = "pending"
		}
		ch := s.Changes
		changes := fmt.Sprintf("+%d -%d ~%d nodes", ch.NodesAdded, ch.NodesRemoved, ch.NodesMoved)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s", s.ID, s.CreatedAt.UTC().Format(time.RFC3339), s.Status,
			s.Counts.Nodes, s.Counts.Switches, s.Counts.Domains, changes, mark)
		if wide {
			fmt.Fprintf(tw, "\t%s\t%.12s\t%s", s.Trigger, s.Digest, s.Reason)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func newDiffCmd(env *Env) *cobra.Command {
	var svc *serviceFlags
	var out *outputFlags
	var limit int
	cmd := &cobra.Command{
		Use:   "diff [FROM] [TO]",
		Short: "Show what changed between two snapshots of a running service",
		Long: `Show what changed between two snapshots (GET /v1/diff): nodes added,
removed and moved, switches added, removed and changed, domains. With no
argument, the current snapshot against its parent; with one, that
snapshot (a pending one, say) against its parent; with two, FROM to TO.`,
		Example: `  toposcope diff
  toposcope diff 7          # the pending snapshot 7 against the current one it would replace
  toposcope diff 3 7 -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return fmt.Errorf("%w: %s takes at most two snapshot IDs, got %q", ErrUsage, cmd.CommandPath(), args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{"limit": {strconv.Itoa(limit)}}
			for _, a := range args {
				if _, err := snapshotID(a); err != nil {
					return err
				}
			}
			switch len(args) {
			case 1:
				q.Set("to", args[0])
			case 2:
				q.Set("from", args[0])
				q.Set("to", args[1])
			}
			return getAndPrint(cmd, env.Stdout, svc, out, "/v1/diff?"+q.Encode(), func(d *store.CappedDiff, _ bool) error {
				return writeDiff(env.Stdout, d)
			})
		},
	}
	svc = addServiceFlags(cmd, "read", 30*time.Second)
	cmd.Flags().IntVar(&limit, "limit", 50, "list at most this many entries of each kind (1-1000); the counts are complete")
	out = addOutputFlags(cmd, "", outTable, outJSON, outYAML)
	return cmd
}

// snapshotID parses a snapshot ID argument.
func snapshotID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("%w: %q is not a snapshot ID (a positive integer; toposcope snapshots lists them)", ErrUsage, s)
	}
	return id, nil
}

// writeDiff prints a diff: the counts, then each list.
func writeDiff(w io.Writer, d *store.CappedDiff) error {
	s := d.Summary
	fmt.Fprintf(w, "snapshot %d -> %d: nodes +%d -%d moved %d; switches +%d -%d changed %d; domains +%d -%d changed %d\n",
		d.From, d.To, s.NodesAdded, s.NodesRemoved, s.NodesMoved, s.SwitchesAdded, s.SwitchesRemoved, s.SwitchesChanged,
		s.DomainsAdded, s.DomainsRemoved, s.DomainsChanged)
	list := func(label string, items []string, total int) {
		if total == 0 {
			return
		}
		fmt.Fprintf(w, "%s (%d):", label, total)
		for _, it := range items {
			fmt.Fprintf(w, " %s", it)
		}
		if len(items) < total {
			fmt.Fprintf(w, " … %d more", total-len(items))
		}
		fmt.Fprintln(w)
	}
	if d.Diff == nil {
		return nil
	}
	list("nodes added", d.NodesAdded, s.NodesAdded)
	list("nodes removed", d.NodesRemoved, s.NodesRemoved)
	moved := make([]string, len(d.NodesMoved))
	for i, m := range d.NodesMoved {
		moved[i] = fmt.Sprintf("%s(%s->%s)", m.Name, m.From.Leaf, m.To.Leaf)
	}
	list("nodes moved", moved, s.NodesMoved)
	list("switches added", d.SwitchesAdded, s.SwitchesAdded)
	list("switches removed", d.SwitchesRemoved, s.SwitchesRemoved)
	changed := make([]string, len(d.SwitchesChanged))
	for i, c := range d.SwitchesChanged {
		changed[i] = c.ID
	}
	list("switches changed", changed, s.SwitchesChanged)
	list("domains added", d.DomainsAdded, s.DomainsAdded)
	list("domains removed", d.DomainsRemoved, s.DomainsRemoved)
	list("domains changed", d.DomainsChanged, s.DomainsChanged)
	return nil
}

func newAcceptCmd(env *Env) *cobra.Command {
	var svc *serviceFlags
	cmd := &cobra.Command{
		Use:   "accept ID",
		Short: "Accept the snapshot the shrink guard refused: it becomes current and is published",
		Long: `Accept a snapshot the shrink guard refused (POST /v1/snapshots/{id}/accept,
with a write token): it becomes the current topology and the engines
publish it. toposcope status names the pending snapshot; toposcope diff ID
shows what accepting it changes.`,
		Example: `  toposcope status
  toposcope diff 7
  toposcope accept 7 --token-file /etc/toposcope/write.token`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: %s takes one snapshot ID, got %q", ErrUsage, cmd.CommandPath(), args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := snapshotID(args[0])
			if err != nil {
				return err
			}
			c, ctx, cancel, err := svc.client(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			var a acceptAnswer
			if err := c.do(ctx, "POST", "/v1/snapshots/"+strconv.FormatUint(id, 10)+"/accept", struct{}{}, &a); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "toposcope: snapshot %d accepted: it is the current topology", id)
			if a.Run != nil {
				fmt.Fprintf(env.Stdout, "; run %d: %s", a.Run.ID, a.Run.Outcome)
				if a.Run.Error != "" {
					fmt.Fprintf(env.Stdout, ": %s", a.Run.Error)
				}
			}
			fmt.Fprintln(env.Stdout)
			if a.Run != nil && a.Run.Outcome == store.OutcomePublishFailed {
				return fmt.Errorf("accepted, but publishing failed: %s", a.Run.Error)
			}
			return nil
		},
	}
	svc = addServiceFlags(cmd, "write", time.Minute)
	return cmd
}
