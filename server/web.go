package server

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
)

// webFiles is the web view: one page, its style sheet and its scripts
// (ES modules that import each other from /ui/), with no build step. The page holds no data: it reads the API with the
// same tokens as any client, so it is served without one.
//
//go:embed web
var webFiles embed.FS

// webHeaders keep the page from loading anything but its own files and
// the API, and from being framed by another site.
var webHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:; " +
		"style-src 'self' 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"Cache-Control":          "no-cache",
}

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// loadAssets reads the embedded files once.
func loadAssets() (map[string]asset, error) {
	out := map[string]asset{}
	entries, err := webFiles.ReadDir("web")
	if err != nil {
		return nil, err
	}
	types := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	for _, e := range entries {
		b, err := webFiles.ReadFile("web/" + e.Name())
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = asset{body: b, contentType: types[path.Ext(e.Name())], etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return out, nil
}

// page answers GET /: the web view.
func (h *handlers) page(c *gin.Context) { h.serveAsset(c, "index.html") }

// webAsset answers GET /ui/{file}: the view's scripts and style sheet.
func (h *handlers) webAsset(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("file"), "/")
	if name == "index.html" || strings.Contains(name, "/") {
		h.fail(c, errNoRoute)
		return
	}
	h.serveAsset(c, name)
}

func (h *handlers) serveAsset(c *gin.Context, name string) {
	a, ok := h.assets[name]
	if !ok {
		h.fail(c, errNoRoute)
		return
	}
	for k, v := range webHeaders {
		c.Header(k, v)
	}
	c.Header("ETag", a.etag)
	if c.GetHeader("If-None-Match") == a.etag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, a.contentType, a.body)
}
