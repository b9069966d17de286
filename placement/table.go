package placement

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toposcope/toposcope/internal/hostlist"
)

// WriteTable prints a result as a readable ranking: the account's
// standing now and after, then one row per candidate and its victims.
func WriteTable(w io.Writer, res *Result) error {
	s, a := res.Standing, res.After
	kind := "unallocated (free, preemptible)"
	if res.Allocated {
		kind = "allocated, protected " + res.MinRuntime.String()
	}
	fmt.Fprintf(w, "request: account %s, %d GPUs, %s\n", res.Request.Account, res.Request.Total(), kind)
	fmt.Fprintf(w, "standing: S %.4g  rho %.4g -> %.4g  fairShare %.4g -> %.4g  key %.4g -> %.4g\n",
		s.NormShares, s.Rho, a.Rho, s.FairShare, a.FairShare, s.Key, a.Key)
	if len(s.LevelPath) > 0 {
		steps := make([]string, len(s.LevelPath))
		for i, st := range s.LevelPath {
			lf := "inf"
			if st.LevelFS != nil {
				lf = fmt.Sprintf("%.4g", *st.LevelFS)
			}
			steps[i] = st.Account + " LF " + lf
		}
		fmt.Fprintf(w, "fair tree: %s (rank %d)\n", strings.Join(steps, " > "), s.Rank)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tCLASS\tGROUP\tLCA\tLEAVES\tDOMAINS\tFRAG\tKEEP\tPREEMPT_GPUH\tWAIT\tVICTIMS\tNODES")
	for _, c := range res.Candidates {
		sc := c.Scores
		names := make([]string, len(c.Nodes))
		for i, n := range c.Nodes {
			names[i] = n.Node
		}
		lca := fmt.Sprint(sc.LCALevel)
		if sc.LCASwitch != "" {
			lca += " " + sc.LCASwitch
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%.3f\t%.3f\t%.1f\t%s\t%d\t%s\n", c.Rank, c.Class, c.Group, lca,
			sc.Leaves, sc.Domains, sc.SFrag, sc.SKeep, sc.Preemption/3600,
			(time.Duration(math.Round(sc.WaitSeconds)) * time.Second).String(), len(c.Victims), hostlist.Compress(names))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range res.Candidates {
		for _, v := range c.Victims {
			fmt.Fprintf(w, "  #%d victim %s (%s, %d GPUs): %s\n", c.Rank, v.Workload, v.Account, v.GPUs, v.Reason)
		}
	}
	if len(res.Candidates) > 0 {
		fmt.Fprintf(w, "rank key: [%s]\n", strings.Join(rankKeyNames, ", "))
	}
	return nil
}

var rankKeyNames = []string{"class", "preferredMissed", "lcaLevel", "leaves", "domains", "nodeSlack", "-sFrag", "-sKeep",
	"preemptionGPUSeconds", "waitSeconds"}
