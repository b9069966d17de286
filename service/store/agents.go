package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
)

// bAgents holds the latest agent report of each node: node name ->
// AgentReport (JSON).
var bAgents = []byte("agents")

// AgentReport is the latest report of one node's agent.
type AgentReport = providers.AgentReport

// AgentRetention limits the agent reports kept.
type AgentRetention struct {
	// MaxAge drops reports received longer ago (default 24h; 0 keeps all).
	MaxAge time.Duration `yaml:"maxAge"`
	// MaxReports is the most reports kept, the newest (default 100000).
	MaxReports int `yaml:"maxReports"`
}

// DefaultAgentRetention returns the agent report retention defaults.
func DefaultAgentRetention() AgentRetention {
	return AgentRetention{MaxAge: 24 * time.Hour, MaxReports: 100000}
}

// Validate reports every invalid key as config.FieldErrors.
func (r AgentRetention) Validate() error {
	var errs []error
	if r.MaxAge < 0 {
		errs = append(errs, config.Errorf("maxAge", "must not be negative, got %s", r.MaxAge))
	}
	if r.MaxReports < 1 {
		errs = append(errs, config.Errorf("maxReports", "must be at least 1, got %d", r.MaxReports))
	}
	return errors.Join(errs...)
}

// PutAgentReport stores r as the latest report of r.Facts.Node.
func (s *Store) PutAgentReport(ctx context.Context, r AgentReport) error {
	if r.Facts.Node == "" {
		return errors.New("put agent report: empty node name")
	}
	if err := s.update(ctx, func(tx txn) error { return putJSON(tx, bAgents, []byte(r.Facts.Node), r) }); err != nil {
		return fmt.Errorf("put agent report %s: %w", r.Facts.Node, err)
	}
	return nil
}

// AgentReport returns the latest report of node; the error wraps
// ErrNotFound when there is none.
func (s *Store) AgentReport(ctx context.Context, node string) (AgentReport, error) {
	var r AgentReport
	if err := s.view(ctx, func(tx txn) error { return getJSON(tx, bAgents, []byte(node), &r) }); err != nil {
		return AgentReport{}, fmt.Errorf("agent report %s: %w", node, err)
	}
	return r, nil
}

// AgentReports lists the latest report of every node, by node name; it
// implements providers.AgentReports.
func (s *Store) AgentReports(ctx context.Context) ([]AgentReport, error) {
	var out []AgentReport
	err := s.view(ctx, func(tx txn) error {
		return scanJSON(tx, bAgents, span{}, "node", strName, func(_ []byte, r *AgentReport) error {
			out = append(out, *r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("agent reports: %w", err)
	}
	return out, nil
}

// DeleteAgentReport deletes the report of node; the error wraps
// ErrNotFound when there is none.
func (s *Store) DeleteAgentReport(ctx context.Context, node string) error {
	err := s.update(ctx, func(tx txn) error {
		v, err := tx.get(bAgents, []byte(node))
		if err != nil {
			return err
		}
		if v == nil {
			return ErrNotFound
		}
		return tx.del(bAgents, []byte(node))
	})
	if err != nil {
		return fmt.Errorf("delete agent report %s: %w", node, err)
	}
	return nil
}

// AgentReportsPage lists at most limit reports, by node name, of the
// nodes named after after ("" for the first page). next is the last
// node listed when more follow (the next page's after), else "".
func (s *Store) AgentReportsPage(ctx context.Context, after string, limit int) (page []AgentReport, next string, err error) {
	if limit < 1 {
		return nil, "", fmt.Errorf("agent reports: limit %d: must be positive", limit)
	}
	sp := span{limit: limit + 1}
	if after != "" {
		sp.past = []byte(after)
	}
	err = s.view(ctx, func(tx txn) error {
		page, next = nil, ""
		return scanJSON(tx, bAgents, sp, "node", strName, func(k []byte, r *AgentReport) error {
			if len(page) == limit {
				next = page[len(page)-1].Facts.Node
				return errStop
			}
			r.Facts.Node = string(k)
			page = append(page, *r)
			return nil
		})
	})
	if err != nil {
		return nil, "", fmt.Errorf("agent reports: %w", err)
	}
	return page, next, nil
}

// PruneAgentReports applies r as of now: it deletes the reports received
// more than r.MaxAge ago and, beyond r.MaxReports, the oldest. It returns
// how many it deleted.
func (s *Store) PruneAgentReports(ctx context.Context, now time.Time, r AgentRetention) (int, error) {
	type rec struct {
		node string
		at   time.Time
	}
	n := 0
	err := s.update(ctx, func(tx txn) error {
		n = 0
		var all []rec
		if err := scanJSON(tx, bAgents, span{}, "node", strName, func(k []byte, ar *AgentReport) error {
			all = append(all, rec{string(k), ar.ReceivedAt})
			return nil
		}); err != nil {
			return err
		}
		slices.SortFunc(all, func(a, b rec) int { return a.at.Compare(b.at) })
		for i, x := range all {
			tooMany := len(all)-i > r.MaxReports
			tooOld := r.MaxAge > 0 && now.Sub(x.at) > r.MaxAge
			if !tooMany && !tooOld {
				break // sorted by age: the rest is newer
			}
			if err := tx.del(bAgents, []byte(x.node)); err != nil {
				return fmt.Errorf("delete node %s: %w", x.node, err)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune agent reports: %w", err)
	}
	return n, nil
}
