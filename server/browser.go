package server

import (
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// Errors of the browser guard.
var (
	errCrossSite   = errors.New("cross-site request refused: the API is not for web pages of other origins")
	errMediaType   = errors.New("the body must be JSON, sent with Content-Type: application/json")
	errWritesLocal = errors.New("this service has no tokens (server.auth) and listens beyond loopback: it serves reads only")
)

// guardWrites keeps web browsers from driving the API: a request that
// can change state or carries a body is refused when a browser says it
// comes from another site (Sec-Fetch-Site) or another origin (Origin
// whose host is not the one asked), and a body must be JSON, which a
// cross-site form or a "simple" fetch cannot send without a CORS
// preflight, and the service never grants one (no
// Access-Control-Allow-* header is ever sent).
func (h *handlers) guardWrites(c *gin.Context) {
	r := c.Request
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return
	}
	switch c.GetHeader("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		h.fail(c, errCrossSite)
		return
	}
	if o := c.GetHeader("Origin"); o != "" && !sameHost(o, r.Host) {
		h.fail(c, errCrossSite)
		return
	}
	if r.ContentLength != 0 || r.Header.Get("Transfer-Encoding") != "" {
		mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
		if err != nil || mt != "application/json" {
			h.fail(c, errMediaType)
			return
		}
	}
}

// sameHost reports whether the Origin header names the host (and port)
// the request was sent to.
func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" and other opaque origins
	}
	return strings.EqualFold(u.Host, host)
}

// loopbackOnly reports whether listen (host:port) accepts connections
// from this machine only.
func loopbackOnly(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
