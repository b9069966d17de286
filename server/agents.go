package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// AgentList is the body of GET /v1/agents: one page of reports.
type AgentList struct {
	// Agents are the latest reports, by node name.
	Agents []store.AgentReport `json:"agents"`
	// Next, when more reports follow, is the after= of the next page.
	Next string `json:"next,omitempty"`
}

// Pages of GET /v1/agents: a report is at most agents.MaxReportBytes, so
// a page is at most maxAgentsLimit times that.
const (
	defaultAgentsLimit = 500
	maxAgentsLimit     = 1000
)

// putAgent answers PUT /v1/agents/{node}: the body (providers.NodeFacts, strict
// JSON) replaces the node's report; older reports are pruned.
func (h *handlers) putAgent(c *gin.Context) {
	node := c.Param("node")
	var f providers.NodeFacts
	release, ok := h.decodeBody(c, agents.MaxReportBytes, &f)
	if !ok {
		return
	}
	defer release()
	if err := agents.CheckFacts(f); err != nil {
		h.fail(c, err)
		return
	}
	if f.Node != node {
		h.fail(c, badParam("node", fmt.Sprintf("body names node %q, the path %q", f.Node, node)))
		return
	}
	rep := store.AgentReport{Facts: f, ReceivedAt: h.Now().UTC()}
	if err := h.Store.PutAgentReport(c.Request.Context(), rep); err != nil {
		h.fail(c, err)
		return
	}
	h.pruneAgents(c.Request.Context())
	c.JSON(http.StatusOK, rep)
}

// agentPruneEvery is how often a PUT prunes the agent reports: pruning
// reads them all, too much for every one of 100,000 agents' reports.
const agentPruneEvery = time.Minute

// pruneAgents applies the agent retention if it was last applied more
// than agentPruneEvery ago.
func (h *handlers) pruneAgents(ctx context.Context) {
	now := h.Now()
	last := h.agentsPruned.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < agentPruneEvery {
		return
	}
	if !h.agentsPruned.CompareAndSwap(last, now.UnixNano()) {
		return // another request is pruning
	}
	if n, err := h.Store.PruneAgentReports(ctx, now, h.AgentRetention); err != nil {
		h.log.Warn("prune agent reports", "err", err)
	} else if n > 0 {
		h.log.Info("pruned agent reports", "deleted", n)
	}
}

// deleteAgent answers DELETE /v1/agents/{node}: the node's report is
// forgotten (the next discovery has no facts of it).
func (h *handlers) deleteAgent(c *gin.Context) {
	node := c.Param("node")
	if err := topology.CheckNodeName(node); err != nil {
		h.fail(c, &service.RequestError{Field: "node", Err: err})
		return
	}
	if err := h.Store.DeleteAgentReport(c.Request.Context(), node); err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// agents answers GET /v1/agents?limit=&after=: a page of the latest
// reports, by node name.
func (h *handlers) agents(c *gin.Context) {
	limit, err := limitParam(c, defaultAgentsLimit, maxAgentsLimit)
	if err != nil {
		h.fail(c, err)
		return
	}
	list, next, err := h.Store.AgentReportsPage(c.Request.Context(), c.Query("after"), limit)
	if err != nil {
		h.fail(c, err)
		return
	}
	if list == nil {
		list = []store.AgentReport{}
	}
	c.JSON(http.StatusOK, AgentList{Agents: list, Next: next})
}

// agent answers GET /v1/agents/{node}: the node's latest report.
func (h *handlers) agent(c *gin.Context) {
	node := c.Param("node")
	if err := topology.CheckNodeName(node); err != nil {
		h.fail(c, &service.RequestError{Field: "node", Err: err})
		return
	}
	rep, err := h.Store.AgentReport(c.Request.Context(), node)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, rep)
}
