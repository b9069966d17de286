// Package placement scores where a GPU job should run and what it does to
// fairness: GPU-time budgets in an account tree, a usage ledger, fair-share
// standings in three modes (Fair Tree, classic 2^(-U/S), window ratio),
// owed-versus-delivered accounting, and ranked, explained candidate node
// sets over a topology.Graph. The formulas follow
// shared/reference/fairshare.md sections 2 and 9; see docs/placement.md.
//
// The package never reads the wall clock: every computation takes "now".
package placement
