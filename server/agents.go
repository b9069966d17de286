package server

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// nodeGUID is an HCA node GUID as the agent sends it.
var nodeGUID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// AgentList is the body of GET /v1/agents.
type AgentList struct {
	// Agents are the latest reports, by node name.
	Agents []store.AgentReport `json:"agents"`
}

// putAgent answers PUT /v1/agents/{node}: the body (agent.Facts, strict
// JSON) replaces the node's report; older reports are pruned.
func (h *handlers) putAgent(c *gin.Context) {
	node := c.Param("node")
	if err := topology.CheckNodeName(node); err != nil {
		h.fail(c, &service.RequestError{Field: "node", Err: err})
		return
	}
	f, err := decodeFacts(c.Request.Body)
	if err != nil {
		h.fail(c, err)
		return
	}
	if f.Node != node {
		h.fail(c, badParam("node", fmt.Sprintf("body names node %q, the path %q", f.Node, node)))
		return
	}
	rep := store.AgentReport{Facts: f, ReceivedAt: h.Now().UTC()}
	if err := h.Store.PutAgentReport(rep); err != nil {
		h.fail(c, err)
		return
	}
	h.pruneAgents()
	c.JSON(http.StatusOK, rep)
}

// agentPruneEvery is how often a PUT prunes the agent reports: pruning
// reads them all, too much for every one of 100,000 agents' reports.
const agentPruneEvery = time.Minute

// pruneAgents applies the agent retention if it was last applied more
// than agentPruneEvery ago.
func (h *handlers) pruneAgents() {
	now := h.Now()
	last := h.agentsPruned.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < agentPruneEvery {
		return
	}
	if !h.agentsPruned.CompareAndSwap(last, now.UnixNano()) {
		return // another request is pruning
	}
	if n, err := h.Store.PruneAgentReports(now, h.AgentRetention); err != nil {
		h.log.Warn("prune agent reports", "err", err)
	} else if n > 0 {
		h.log.Info("pruned agent reports", "deleted", n)
	}
}

// decodeFacts reads one JSON agent.Facts with no unknown fields and no
// trailing data, and checks its values.
func decodeFacts(body io.Reader) (agent.Facts, error) {
	var f agent.Facts
	if body == nil {
		return f, badParam("body", "is required")
	}
	if err := decodeStrict(body, &f); err != nil {
		return f, err
	}
	if f.GPUs < 0 {
		return f, badParam("gpus", "must not be negative")
	}
	if f.Clique != "" {
		if _, err := nvlink.ParseCliqueLabel(f.Clique); err != nil {
			return f, &service.RequestError{Field: "clique", Err: err}
		}
	}
	for i, hca := range f.HCAs {
		field := fmt.Sprintf("hcas[%d]", i)
		if hca.Name == "" || strings.ContainsAny(hca.Name, " \t\n/,=") {
			return f, badParam(field+".name", "must be a device name (mlx5_0)")
		}
		if hca.NodeGUID != "" && !nodeGUID.MatchString(hca.NodeGUID) {
			return f, badParam(field+".nodeGUID", "must be 16 lower-case hex digits")
		}
	}
	return f, nil
}

// agents answers GET /v1/agents: the latest report of every node.
func (h *handlers) agents(c *gin.Context) {
	list, err := h.Store.AgentReports(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	if list == nil {
		list = []store.AgentReport{}
	}
	c.JSON(http.StatusOK, AgentList{Agents: list})
}

// agent answers GET /v1/agents/{node}: the node's latest report.
func (h *handlers) agent(c *gin.Context) {
	node := c.Param("node")
	if err := topology.CheckNodeName(node); err != nil {
		h.fail(c, &service.RequestError{Field: "node", Err: err})
		return
	}
	rep, err := h.Store.AgentReport(node)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, rep)
}
