package server

import (
	"context"
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
	g := v1.Group("/extender", h.requireExtender)
	g.POST("/filter", extenderVerb(h, (*extender.Extender).Filter))
	g.POST("/prioritize", extenderVerb(h, (*extender.Extender).Prioritize))
	g.POST("/preempt", extenderVerb(h, (*extender.Extender).Preempt))
}

// errExtenderBusy refuses a call beyond placement.extender.maxConcurrent:
// 429 with Retry-After.
var errExtenderBusy = fmt.Errorf("%w: placement.extender.maxConcurrent extender calls are in progress", service.ErrBusy)

// extenderVerb serves one verb: 404 while the extender is off; else it
// reads the body (within server.bodyReadTimeout and server.maxBodyMemory),
// then takes one of the extender's call slots (429 when none is free) for
// the rest of the call, decodes the body strictly into an A and answers
// what the extender's verb returns. A caller that sends its body slowly
// holds no slot: kube-scheduler's calls are not starved by it.
func extenderVerb[A, R any](h *handlers, verb func(*extender.Extender, context.Context, *A) (R, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if h.Extender == nil {
			h.fail(c, errExtenderOff)
			return
		}
		b, err := h.readBody(c, h.Config.MaxBodyBytes)
		if err != nil {
			h.fail(c, err)
			return
		}
		defer b.release()
		n, ok := h.extenderSlots.tryAcquire(1)
		if !ok {
			h.fail(c, errExtenderBusy)
			return
		}
		defer h.extenderSlots.release(n)
		var a A
		if err := decodeCall(b.data, &a); err != nil {
			h.fail(c, err)
			return
		}
		res, err := verb(h.Extender, c.Request.Context(), &a)
		h.answerExtender(c, &a, res, err)
	}
}

// decodeCall decodes a verb's body strictly: a filter or prioritize
// call through decodeArgs, others through decodeStrict.
func decodeCall(raw []byte, v any) error {
	if a, ok := v.(*extender.Args); ok {
		return decodeArgs(raw, a)
	}
	return decodeStrict(raw, v)
}

// answerExtender answers a verb's result: the filter and prioritize
// answers through their own encoders (extenderjson.go), the filter's
// maps in the order of the call's names; others as c.JSON does.
func (h *handlers) answerExtender(c *gin.Context, args, res any, err error) {
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
	switch r := res.(type) {
	case *extender.FilterResult:
		var names []string
		if a, ok := args.(*extender.Args); ok && a.NodeNames != nil {
			names = *a.NodeNames
		}
		c.Data(http.StatusOK, jsonContentType, appendFilterResult(make([]byte, 0, 64*len(names)+64), r, names))
	case []extender.HostPriority:
		c.Data(http.StatusOK, jsonContentType, appendPriorities(make([]byte, 0, 32*len(r)+2), r))
	default:
		c.JSON(http.StatusOK, res)
	}
}

// jsonContentType is the Content-Type of a JSON answer, as c.JSON sets it.
const jsonContentType = "application/json; charset=utf-8"

// requireExtender lets a call through with a read-scope bearer token, or
// with a verified client certificate (server.tls.clientCA) whose subject
// common name or a DNS name is listed in placement.extender.clients:
// kube-scheduler sends no bearer token.
func (h *handlers) requireExtender(c *gin.Context) {
	if h.creds.Tokens() != nil && c.GetHeader("Authorization") == "" && h.extenderClient(c.Request) {
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
