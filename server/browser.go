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
	errHost        = errors.New("the Host header names none of this service's names (loopback, server.listen, server.auth.allowedHosts): refused as a possible DNS rebinding")
)

// secureHeaders are sent with every answer.
func (h *handlers) secureHeaders(c *gin.Context) {
	c.Header("X-Content-Type-Options", "nosniff")
}

// guardWrites keeps web browsers from driving the API. Without tokens
// (anonymous writes, on loopback only) a request that can change state
// must name this service in its Host header: a page of a rebound DNS
// name reaches the loopback listener as "same-origin" but names its own
// host. (With tokens a browser has no token to send.) Then a request that
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
	if h.creds.Tokens() == nil && !h.knownHost(r.Host) {
		h.fail(c, errHost)
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

// knownHost reports whether host (a Host header, with or without port)
// names this service: a loopback name or address, the host of
// server.listen, or one of server.auth.allowedHosts.
func (h *handlers) knownHost(host string) bool {
	name := hostName(host)
	if name == "" {
		return false
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true // RFC 6761: resolved to loopback by the client itself
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	if lh, _, err := net.SplitHostPort(h.Config.Listen); err == nil && lh != "" && hostName(lh) == name {
		if ip := net.ParseIP(name); ip == nil || !ip.IsUnspecified() {
			return true
		}
	}
	for _, a := range h.Config.Auth.AllowedHosts {
		if hostName(a) == name {
			return true
		}
	}
	return false
}

// hostName is the host of a host[:port], lower case, without brackets
// or a trailing dot.
func hostName(hostport string) string {
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(name, "[]")), ".")
}
