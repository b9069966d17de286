package server

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/extender"
)

// errExtenderOff answers the extender routes when the extender is not
// configured.
var errExtenderOff = errors.New("the scheduler extender is off: set placement.extender.enabled: true")

// extenderRoutes serves kube-scheduler's extender verbs under
// /v1/extender/. Each body is decoded strictly (a pod inside it as
// Kubernetes decodes pods); the answers are the extender protocol's.
func (h *handlers) extenderRoutes(v1 *gin.RouterGroup) {
	g := v1.Group("/extender", h.requireExtender, h.releaseExtender)
	g.POST("/filter", func(c *gin.Context) {
		var a extender.Args
		if !h.decodeExtender(c, &a) {
			return
		}
		res, err := h.Extender.Filter(c.Request.Context(), &a)
		h.answerExtender(c, res, err)
	})
	g.POST("/prioritize", func(c *gin.Context) {
		var a extender.Args
		if !h.decodeExtender(c, &a) {
			return
		}
		res, err := h.Extender.Prioritize(c.Request.Context(), &a)
		h.answerExtender(c, res, err)
	})
	g.POST("/preempt", func(c *gin.Context) {
		var a extender.PreemptionArgs
		if !h.decodeExtender(c, &a) {
			return
		}
		res, err := h.Extender.Preempt(c.Request.Context(), &a)
		h.answerExtender(c, res, err)
	})
}

// errExtenderBusy refuses a call beyond placement.extender.maxConcurrent:
// 429 with Retry-After.
var errExtenderBusy = fmt.Errorf("%w: placement.extender.maxConcurrent extender calls are in progress", service.ErrBusy)

// decodeExtender takes one of the extender's call slots (released when
// the handler returns), then decodes the body strictly; it writes the
// error and returns false when either fails.
func (h *handlers) decodeExtender(c *gin.Context, v any) bool {
	if h.Extender == nil {
		h.fail(c, errExtenderOff)
		return false
	}
	n, ok := h.extenderSlots.tryAcquire(1)
	if !ok {
		h.fail(c, errExtenderBusy)
		return false
	}
	c.Set(extenderSlotKey, n)
	if err := decodeStrict(c.Request.Body, v); err != nil {
		h.fail(c, err)
		return false
	}
	return true
}

// extenderSlotKey holds, in the gin context, the slot units a call took.
const extenderSlotKey = "toposcope.extenderSlot"

// releaseExtender frees the call's slot once the handler has answered.
func (h *handlers) releaseExtender(c *gin.Context) {
	c.Next()
	if n := c.GetInt(extenderSlotKey); n > 0 {
		h.extenderSlots.release(n)
	}
}

func (h *handlers) answerExtender(c *gin.Context, res any, err error) {
	if errors.Is(err, extender.ErrNodeNames) {
		h.fail(c, &service.RequestError{Field: "NodeNames", Err: err})
		return
	}
	if errors.Is(err, extender.ErrNodeObjects) || errors.Is(err, extender.ErrPod) {
		h.fail(c, &service.RequestError{Field: "body", Err: err})
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// requireExtender lets a call through with a read-scope bearer token, or
// with a verified client certificate (server.tls.clientCA) whose subject
// common name or a DNS name is listed in placement.extender.clients:
// kube-scheduler sends no bearer token.
func (h *handlers) requireExtender(c *gin.Context) {
	if h.tokens != nil && c.GetHeader("Authorization") == "" && h.extenderClient(c.Request) {
		return
	}
	h.require(ScopeRead)(c)
}

// extenderClient reports whether r came with a verified client
// certificate named in the extender's clients.
func (h *handlers) extenderClient(r *http.Request) bool {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return false
	}
	return certNamed(r.TLS.VerifiedChains[0][0], h.extenderClients)
}

// certNamed reports whether the certificate's common name or one of its
// DNS names is in names.
func certNamed(cert *x509.Certificate, names []string) bool {
	if slices.Contains(names, cert.Subject.CommonName) && cert.Subject.CommonName != "" {
		return true
	}
	for _, d := range cert.DNSNames {
		if slices.Contains(names, d) {
			return true
		}
	}
	return false
}
