package server

import (
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"
	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service"
)

// render answers GET /v1/render/{engine}?param=value...: the engine's
// document for the current topology, without publishing it. Query
// parameters are the engine's params (a repeated one is a list), decoded
// and validated by the engine's own typed configuration, e.g.
// /v1/render/slurm?plugin=topology/block&slurmVersion=24.11. Only the
// keys a request may set are taken (rendering options); a path, command
// or mode is refused (config.ErrOperatorOnly).
func (h *handlers) render(c *gin.Context) {
	name := c.Param("engine")
	ef, err := h.Registry.Engine(name)
	if err != nil {
		h.fail(c, &service.RequestError{Field: "engine", Err: err})
		return
	}
	var params yaml.Node
	query := c.Request.URL.Query()
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if vs := query[k]; len(vs) == 1 {
			config.SetParam(&params, k, vs[0])
		} else {
			config.SetParamList(&params, k, vs)
		}
	}
	if err := ef.Params.CheckRequest(&params, "params"); err != nil {
		h.fail(c, err)
		return
	}
	eng, err := ef.New(&params, "params", engines.Deps{Logger: h.log.With("engine", name), Stdout: io.Discard, Now: h.Now, RenderOnly: true}.WithDefaults())
	if err != nil {
		h.fail(c, err)
		return
	}
	rd, ok := eng.(engines.Renderer)
	if !ok {
		h.fail(c, badParam("engine", "engine "+name+" has no document to render"))
		return
	}
	st, ok := h.current(c)
	if !ok {
		return
	}
	body, err := rd.Render(c.Request.Context(), st.Graph)
	if err != nil {
		h.fail(c, err)
		return
	}
	if cr, ok := eng.(engines.CoverageReporter); ok {
		c.Header("X-Toposcope-Uncovered", strconv.Itoa(len(cr.Coverage(st.Graph).Uncovered)))
	}
	c.Data(http.StatusOK, rd.ContentType(), body)
}
