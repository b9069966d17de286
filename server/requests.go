package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

// generate is Topograph's POST /v1/generate: 202 with the request ID as
// plain text (JSON when the client accepts only JSON).
func (h *handlers) generate(c *gin.Context) {
	req, err := h.generateRequest(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	id, merged, err := h.Requests.Submit(c.Request.Context(), req)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Location", "/v1/topology?uid="+id)
	if wantsJSON(c) {
		c.JSON(http.StatusAccepted, gin.H{"id": id, "merged": merged})
		return
	}
	c.String(http.StatusAccepted, id)
}

// topology is Topograph's GET /v1/topology?uid=ID: 200 with the engine's
// output, 202 while pending, 404 for an unknown ID, or the request's error.
func (h *handlers) topology(c *gin.Context) {
	id := c.Query("uid")
	if id == "" {
		h.fail(c, badParam("uid", "query parameter uid is required"))
		return
	}
	h.answer(c, id)
}

// lookup is Topograph's POST /v1/lookup: the body of a POST
// /v1/generate, answered as GET /v1/topology answers its request ID,
// without submitting anything.
func (h *handlers) lookup(c *gin.Context) {
	req, err := h.generateRequest(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	id, err := h.Requests.Lookup(req)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.answer(c, id)
}

// generateRequest reads and decodes the body of POST /v1/generate or
// /v1/lookup.
func (h *handlers) generateRequest(c *gin.Context) (*service.GenerateRequest, error) {
	b, err := h.readBody(c, h.Config.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	defer b.release()
	return ParseGenerateRequest(b.data)
}

// answer writes the state of request id.
func (h *handlers) answer(c *gin.Context, id string) {
	res, body, err := h.Requests.Result(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	switch res.State {
	case store.StatePending:
		c.Header("Retry-After", "1")
		if wantsJSON(c) {
			c.JSON(http.StatusAccepted, gin.H{"id": id, "state": res.State})
			return
		}
		c.String(http.StatusAccepted, fmt.Sprintf("request ID %s has been created\n", id))
	case store.StateDone:
		c.Data(http.StatusOK, res.ContentType, body)
	default:
		h.fail(c, service.ResultError(res))
	}
}

// wantsJSON reports whether the client asked for JSON and not plain text.
func wantsJSON(c *gin.Context) bool {
	accept := c.GetHeader("Accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/plain")
}
