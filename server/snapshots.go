package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

const (
	defaultListLimit = 50
	maxListLimit     = 1000
)

// listLimit reads ?limit= (default 50, at most 1000).
func listLimit(c *gin.Context) (int, error) {
	return limitParam(c, defaultListLimit, maxListLimit)
}

// limitParam reads ?limit=: def when absent, else an integer from 1 to
// most.
func limitParam(c *gin.Context, def, most int) (int, error) {
	raw := c.Query("limit")
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > most {
		return 0, badParam("limit", "must be an integer from 1 to "+strconv.Itoa(most))
	}
	return n, nil
}

// idParam reads a snapshot ID from the path or query.
func idParam(raw, field string) (uint64, error) {
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || id == 0 {
		return 0, badParam(field, "must be a snapshot ID (a positive integer)")
	}
	return id, nil
}

// snapshots answers GET /v1/snapshots?limit=&before=: newest first.
func (h *handlers) snapshots(c *gin.Context) {
	limit, err := listLimit(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	var before uint64
	if raw := c.Query("before"); raw != "" {
		if before, err = idParam(raw, "before"); err != nil {
			h.fail(c, err)
			return
		}
	}
	list, err := h.Store.Snapshots(c.Request.Context(), limit, before)
	if err != nil {
		h.fail(c, err)
		return
	}
	cur, pend, err := h.Store.Heads(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	if list == nil {
		list = []store.Snapshot{}
	}
	c.JSON(http.StatusOK, gin.H{"current": cur, "pending": pend, "snapshots": list})
}

// snapshot answers GET /v1/snapshots/{id}: the snapshot and its diff.
func (h *handlers) snapshot(c *gin.Context) {
	id, err := idParam(c.Param("id"), "id")
	if err != nil {
		h.fail(c, err)
		return
	}
	snap, err := h.Store.Snapshot(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	limit, err := listLimit(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	out := gin.H{"snapshot": snap}
	if snap.Parent != 0 {
		if d, err := h.Store.Diff(c.Request.Context(), id); err == nil {
			out["diff"] = d.Capped(limit)
		}
	}
	c.JSON(http.StatusOK, out)
}

// accept answers POST /v1/snapshots/{id}/accept: an operator confirms the
// snapshot the shrink guard refused; it becomes current and is published.
func (h *handlers) accept(c *gin.Context) {
	id, err := idParam(c.Param("id"), "id")
	if err != nil {
		h.fail(c, err)
		return
	}
	snap, run, err := h.Loop.Accept(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"snapshot": snap, "run": run})
}

// diff answers GET /v1/diff?from=&to=&limit=: "to" defaults to the
// current snapshot and "from" to the parent of "to". The counts are
// complete; each list holds at most limit entries (default 50).
func (h *handlers) diff(c *gin.Context) {
	var to, from uint64
	limit, err := listLimit(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if raw := c.Query("to"); raw != "" {
		if to, err = idParam(raw, "to"); err != nil {
			h.fail(c, err)
			return
		}
	} else if st := h.Loop.State(); st.Snapshot != nil {
		to = st.Snapshot.ID
	} else {
		h.fail(c, service.ErrNoTopology)
		return
	}
	toSnap, err := h.Store.Snapshot(c.Request.Context(), to)
	if err != nil {
		h.fail(c, &service.RequestError{Field: "to", Err: err})
		return
	}
	if raw := c.Query("from"); raw != "" {
		if from, err = idParam(raw, "from"); err != nil {
			h.fail(c, err)
			return
		}
	} else if from = toSnap.Parent; from == 0 {
		h.fail(c, badParam("from", "snapshot "+strconv.FormatUint(to, 10)+" has no parent: give from"))
		return
	}
	if from == toSnap.Parent {
		if d, err := h.Store.Diff(c.Request.Context(), to); err == nil {
			c.JSON(http.StatusOK, d.Capped(limit))
			return
		}
	}
	n, ok := h.snapReads.tryAcquire(h.olderGraphs(from, to))
	if !ok {
		h.fail(c, errSnapshotReads)
		return
	}
	defer h.snapReads.release(n)
	a, err := h.snapshotGraph(c.Request.Context(), from)
	if err != nil {
		h.fail(c, &service.RequestError{Field: "from", Err: err})
		return
	}
	b, err := h.snapshotGraph(c.Request.Context(), to)
	if err != nil {
		h.fail(c, &service.RequestError{Field: "to", Err: err})
		return
	}
	d := store.Compare(a, b)
	d.From, d.To = from, to
	c.JSON(http.StatusOK, d.Capped(limit))
}

// runs answers GET /v1/runs?limit=: the newest discovery runs.
func (h *handlers) runs(c *gin.Context) {
	limit, err := listLimit(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	list, err := h.Store.Runs(c.Request.Context(), limit)
	if err != nil {
		h.fail(c, err)
		return
	}
	if list == nil {
		list = []store.Run{}
	}
	c.JSON(http.StatusOK, gin.H{"runs": list})
}

// Status is the answer of GET /v1/status.
type Status struct {
	// Provider is the name of the provider that discovers the topology.
	Provider string `json:"provider"`
	// Engines are the names of the engines that publish it.
	Engines []string `json:"engines"`
	// Ready says a topology has been discovered.
	Ready bool `json:"ready"`
	// Current is the snapshot in force; nil before the first one.
	Current *store.Snapshot `json:"current"`
	// Pending is the snapshot the shrink guard refused; while it is set,
	// the current topology is kept and nothing is published.
	Pending *store.Snapshot `json:"pending"`
	// Accept is the request that accepts Pending; empty without one.
	Accept string `json:"accept,omitempty"`
	// LastRun is the newest discovery run; nil before the first one.
	LastRun *store.Run `json:"lastRun"`
}

// status answers GET /v1/status, where a shrink-guard refusal shows.
func (h *handlers) status(c *gin.Context) {
	st := h.Loop.State()
	out := Status{
		Provider: h.Loop.ProviderName(), Engines: h.Loop.EngineNames(), Ready: st.Graph != nil,
		Current: st.Snapshot, Pending: st.Pending, LastRun: st.LastRun,
	}
	if st.Pending != nil {
		out.Accept = service.AcceptRequest(st.Pending.ID)
	}
	c.JSON(http.StatusOK, out)
}

// discover answers POST /v1/discover: a discovery is queued (merged with
// one already queued).
func (h *handlers) discover(c *gin.Context) {
	if !h.Loop.Trigger(service.TriggerAPI) {
		h.fail(c, &service.RequestError{Field: "discovery.triggers.api", Err: service.ErrDisabled})
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"queued": true})
}
