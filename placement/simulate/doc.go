// Package simulate replays a job trace on a simulated cluster under
// several placement policies (toposcope's ranking, first fit, Kueue's
// BestFit, Slurm's topology/tree greedy) and reports compactness, waits,
// occupancy and per-account owed and delivered GPU-hours; see
// docs/placement.md.
//
// The replay is event driven: it jumps between submit and finish events
// in simulated seconds and never reads the wall clock. Jobs are tried in
// submit order with EASY backfill (or strict FIFO). Without
// Options.Preempt a started job runs for its full duration_seconds; with
// it, work past its protected minimum runtime may be preempted for an
// under-served account's job (toposcope.go), and defragmentation may move
// work off a leaf (defrag.go).
package simulate
