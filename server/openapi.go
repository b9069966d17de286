package server

import (
	"bytes"
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDoc is server/openapi.json, the OpenAPI 3 document of the API.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns a copy of the OpenAPI 3 document served at /openapi.json.
func OpenAPI() []byte { return bytes.Clone(openAPIDoc) }

func (h *handlers) openapi(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", openAPIDoc)
}
