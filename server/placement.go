package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service"
)

// placementRequest is the body of POST /v1/placements: a request plus
// optional overrides of the standing mode and ranking.
type placementRequest struct {
	placement.Request
	Mode    placement.Mode    `json:"mode,omitempty"`
	Ranking placement.Ranking `json:"ranking,omitempty"`
}

// placementState answers with the current topology occupied by the
// ledger and the standings under cfg.
func (h *handlers) placementState(c *gin.Context, cfg placement.Config, extra ...string) (*placement.Cluster, *placement.Standings, bool) {
	o, ok := h.occupied(c, extra...)
	if !ok {
		return nil, nil, false
	}
	stand, err := h.Placer.Standings(o, cfg)
	if err != nil {
		h.fail(c, err)
		return nil, nil, false
	}
	return o.Cluster, stand, true
}

// occupied answers with the current topology occupied by the ledger
// (service.Placer), or writes the error.
func (h *handlers) occupied(c *gin.Context, extra ...string) (service.Occupancy, bool) {
	o, err := h.Placer.Occupied(c.Request.Context(), extra...)
	if err != nil {
		h.fail(c, err)
		return o, false
	}
	h.occupancyHeaders(c, o)
	return o, true
}

// occupancyHeaders names the snapshot an occupancy was built on and says
// how many ledger records it left out because they no longer fit the
// topology (GET /v1/ledger/ignored lists them), logging the first few.
func (h *handlers) occupancyHeaders(c *gin.Context, o service.Occupancy) {
	c.Header("X-Toposcope-Snapshot", strconv.FormatUint(o.State.Snapshot.ID, 10))
	if bad := o.Ignored; len(bad) > 0 {
		h.log.Warn("ledger records ignored: they do not fit the current topology (GET /v1/ledger/ignored lists them)",
			"count", len(bad), "first", clip(strings.Join(bad[:min(len(bad), 3)], ","), 200), "err", clip(o.OccupyErr.Error(), 200))
		c.Header(ignoredHeader, strconv.Itoa(len(bad)))
	}
}

// ignoredHeader counts the ledger records an answer left out because
// they no longer fit the topology; GET /v1/ledger/ignored names them.
const ignoredHeader = "X-Toposcope-Ignored-Records"

// clip cuts s to at most n bytes, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "...(cut)"
}

// IgnoredRecords is the body of GET /v1/ledger/ignored.
type IgnoredRecords struct {
	// Count is how many stored records the current topology ignores.
	Count int `json:"count"`
	// Workloads are the first of them (at most ?limit=).
	Workloads []string `json:"workloads"`
}

// ignoredRecords answers GET /v1/ledger/ignored?limit=: the workloads of
// the stored records that no longer fit the current topology (an unknown
// node, more GPUs than it has), which the occupancy answers leave out.
func (h *handlers) ignoredRecords(c *gin.Context) {
	limit, err := listLimit(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	st, ok := h.current(c)
	if !ok {
		return
	}
	view, err := h.Placement.View(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	_, bad := placement.UsableRecords(st.Graph, view.Records, h.Now())
	out := IgnoredRecords{Count: len(bad), Workloads: bad[:min(len(bad), limit)]}
	if out.Workloads == nil {
		out.Workloads = []string{}
	}
	c.Header(ignoredHeader, strconv.Itoa(len(bad)))
	c.JSON(http.StatusOK, out)
}

// placements answers POST /v1/placements with ranked, explained candidates.
func (h *handlers) placements(c *gin.Context) {
	b, err := h.readBody(c, h.Config.MaxBodyBytes)
	if err != nil {
		h.fail(c, err)
		return
	}
	defer b.release()
	var req placementRequest
	if err := decodeWithDurations(b.data, &req, "", "duration", "minRuntime"); err != nil {
		h.fail(c, err)
		return
	}
	cfg := placement.DefaultConfig()
	if req.Mode != "" {
		cfg.Mode = req.Mode
	}
	if req.Ranking != "" {
		cfg.Ranking = req.Ranking
	}
	res, o, err := h.Placer.Place(c.Request.Context(), req.Request, cfg)
	if o.State != nil {
		h.occupancyHeaders(c, o)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// fairshare answers GET /v1/fairshare?mode= with the standings tree.
func (h *handlers) fairshare(c *gin.Context) {
	cfg := placement.DefaultConfig()
	if m := c.Query("mode"); m != "" {
		cfg.Mode = placement.Mode(m)
		if err := cfg.Validate(); err != nil {
			h.fail(c, badParam("mode", err.Error()))
			return
		}
	}
	if _, st, ok := h.placementState(c, cfg); ok {
		c.JSON(http.StatusOK, st)
	}
}

// capacity answers GET /v1/capacity.
func (h *handlers) capacity(c *gin.Context) {
	cfg := placement.DefaultConfig()
	if cl, _, ok := h.placementState(c, cfg); ok {
		c.JSON(http.StatusOK, cl.Capacity(cfg))
	}
}

// ledger answers GET /v1/ledger with every record.
func (h *handlers) ledger(c *gin.Context) {
	view, err := h.Placement.View(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, placement.Ledger{Records: view.Records})
}

// appendLedger answers POST /v1/ledger: {"records": [...]} is appended.
// A record's minRuntime is nanoseconds or a duration string ("4h").
func (h *handlers) appendLedger(c *gin.Context) {
	var body struct {
		Records []json.RawMessage `json:"records"`
	}
	release, ok := h.decodeBody(c, h.Config.MaxBodyBytes, &body)
	if !ok {
		return
	}
	defer release()
	l := placement.Ledger{Records: make([]placement.Record, len(body.Records))}
	for i, raw := range body.Records {
		if err := decodeWithDurations(raw, &l.Records[i], "records["+strconv.Itoa(i)+"].", "minRuntime"); err != nil {
			h.fail(c, err)
			return
		}
	}
	if !h.checkRecords(c, l.Records) {
		return
	}
	if err := h.Placement.Append(c.Request.Context(), l.Records); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"appended": len(l.Records), "at": h.Now().UTC().Format(time.RFC3339)})
}

// budgets answers GET /v1/budgets with the account tree.
func (h *handlers) budgets(c *gin.Context) {
	view, err := h.Placement.View(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, view.Tree.Budgets())
}

// putBudgets answers PUT /v1/budgets: the tree is replaced, then
// published by the engines of the budgets tree.
func (h *handlers) putBudgets(c *gin.Context) {
	var b placement.Budgets
	release, ok := h.decodeBody(c, h.Config.MaxBodyBytes, &b)
	if !ok {
		return
	}
	defer release()
	if err := h.Placement.SetBudgets(c.Request.Context(), &b); err != nil {
		h.fail(c, err)
		return
	}
	// The engines of the budgets tree (kueue-budgets) publish it now; a
	// refusal (the shrink guard) or failure leaves the budgets stored and
	// is told in a Warning header: PUT again with ?accept=shrink to let a
	// shrinking tree through.
	for _, r := range h.Loop.PublishBudgets(c.Request.Context(), c.Query("accept") == "shrink") {
		if r.Error != "" {
			c.Writer.Header().Add("Warning", "299 toposcope "+strconv.Quote(r.Engine+": "+r.Error))
		}
	}
	c.JSON(http.StatusOK, &b)
}

// checkRecords vets records against the current topology and the stored
// ledger (placement.CheckRecords), answering the request when they fail;
// records that name nodes need a topology to be checked against.
func (h *handlers) checkRecords(c *gin.Context, recs []placement.Record) bool {
	withNodes := false
	for i := range recs {
		withNodes = withNodes || len(recs[i].Nodes) > 0
	}
	if !withNodes {
		return true
	}
	st, ok := h.current(c)
	if !ok {
		return false
	}
	view, err := h.Placement.View(c.Request.Context())
	if err == nil {
		err = placement.CheckRecords(st.Graph, view.Records, recs, h.Now())
	}
	if err != nil {
		h.fail(c, err)
		return false
	}
	return true
}

// deleteLedger answers DELETE /v1/ledger/{workload}: the workload's
// stored records are removed (a record ingested by mistake, or one the
// topology no longer fits).
func (h *handlers) deleteLedger(c *gin.Context) {
	n, err := h.Placement.Delete(c.Request.Context(), c.Param("workload"))
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": n})
}
