package server

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

// Errors of the HTTP layer itself.
var (
	errUnauthorized = errors.New("missing or invalid bearer token")
	errForbidden    = errors.New("token lacks the scope for this request")
	errNoRoute      = errors.New("no such route")
	errNoMethod     = errors.New("method not allowed on this route")
	errPanic        = errors.New("internal error")
)

// ErrorBody is the JSON of every error response:
// {"error":{"code","message","field"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	// Code is a stable machine-readable code, e.g. "invalid_request".
	Code string `json:"code"`
	// Message says what went wrong; it never quotes a credential.
	Message string `json:"message"`
	// Field is the request or parameter field at fault, or "".
	Field string `json:"field"`
}

// statusOf maps an error to its HTTP status and code. This is the only
// place where statuses are chosen for errors.
func statusOf(err error) (int, string) {
	var tooBig *http.MaxBytesError
	var simulated *service.SimulatedError
	switch {
	case errors.As(err, &simulated):
		return simulated.Code, "simulated" // the status the request asked Topograph's test provider for
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "body_too_large"
	case errors.Is(err, errBodySlow):
		return http.StatusRequestTimeout, "body_timeout"
	case errors.Is(err, errUnauthorized):
		return http.StatusUnauthorized, "unauthorized"
	case errors.Is(err, errForbidden):
		return http.StatusForbidden, "forbidden"
	case errors.Is(err, errCrossSite), errors.Is(err, errWritesLocal), errors.Is(err, errHost):
		return http.StatusForbidden, "forbidden"
	case errors.Is(err, errMediaType):
		return http.StatusUnsupportedMediaType, "unsupported_media_type"
	case errors.Is(err, errExtenderOff):
		return http.StatusNotFound, "extender_off"
	case errors.Is(err, errNoRoute):
		return http.StatusNotFound, "no_route"
	case errors.Is(err, errNoMethod):
		return http.StatusMethodNotAllowed, "method_not_allowed"
	case errors.Is(err, store.ErrFull):
		return http.StatusInsufficientStorage, "store_full"
	case errors.Is(err, store.ErrReadOnly):
		return http.StatusServiceUnavailable, "store_read_only"
	case errors.Is(err, store.ErrUnavailable):
		return http.StatusServiceUnavailable, "store_unavailable"
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, store.ErrNotPending):
		return http.StatusConflict, "not_pending"
	case errors.Is(err, service.ErrShrinkRefused):
		return http.StatusConflict, "shrink_guard"
	case errors.Is(err, service.ErrBusy):
		return http.StatusTooManyRequests, "busy"
	case errors.Is(err, service.ErrDisabled):
		return http.StatusForbidden, "disabled"
	case errors.Is(err, service.ErrDiscoveryFailing):
		return http.StatusServiceUnavailable, "discovery_failing"
	case errors.Is(err, service.ErrNoTopology):
		return http.StatusServiceUnavailable, "no_topology"
	case errors.Is(err, service.ErrInterrupted):
		return http.StatusServiceUnavailable, "interrupted"
	case errors.Is(err, service.ErrClosed), errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable, "shutting_down"
	case errors.Is(err, config.ErrOperatorOnly), errors.Is(err, service.ErrNotConfigured):
		return http.StatusForbidden, "operator_only"
	case errors.Is(err, plugins.ErrUnknownPlugin):
		return http.StatusBadRequest, "unknown_plugin"
	case errors.Is(err, engines.ErrInexpressible):
		return http.StatusUnprocessableEntity, "inexpressible"
	case errors.Is(err, placement.ErrNoRecord):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, placement.ErrUnknownAccount):
		return http.StatusNotFound, "unknown_account"
	case errors.Is(err, placement.ErrNoCandidate):
		return http.StatusUnprocessableEntity, "no_candidate"
	case errors.Is(err, placement.ErrInvalid):
		return http.StatusBadRequest, "invalid_request"
	case errors.Is(err, config.ErrInvalid), errors.Is(err, service.ErrBadRequest):
		return http.StatusBadRequest, "invalid_request"
	case errors.Is(err, providers.ErrNoCredentials):
		return http.StatusBadRequest, "no_credentials"
	case errors.Is(err, providers.ErrAuth):
		return http.StatusForbidden, "provider_auth"
	case errors.Is(err, providers.ErrUnavailable):
		return http.StatusBadGateway, "upstream_unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "timeout"
	}
	return http.StatusInternalServerError, "internal"
}

// lineRef matches the "(line N)" of configuration errors: API parameters
// arrive as one-line JSON, so the line says nothing.
var lineRef = regexp.MustCompile(` \(line \d+\)`)

// fail writes err as the JSON error body, with its status, and stops the
// handler chain.
func (h *handlers) fail(c *gin.Context, err error) {
	status, code := statusOf(err)
	if code == "simulated" {
		// Topograph's text: the message, with a newline unless the
		// answer is 202.
		body := err.Error()
		if status != http.StatusAccepted {
			body += "\n"
		}
		c.Data(status, "text/plain; charset=utf-8", []byte(body))
		c.Abort()
		return
	}
	msg := lineRef.ReplaceAllString(err.Error(), "")
	switch status {
	case http.StatusInternalServerError:
		h.log.Error("request failed", "route", c.FullPath(), "err", err)
		msg = "internal error; see the service log"
	case http.StatusInsufficientStorage:
		h.log.Error("request failed: the store is full", "route", c.FullPath(), "store", h.Store.Path(), "err", err)
		msg = "the store (" + h.Store.Path() + ") is full; see the service log"
	}
	if status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", `Bearer realm="toposcope"`)
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "5")
	}
	field := lineRef.ReplaceAllString(service.FieldOf(err), "")
	c.AbortWithStatusJSON(status, ErrorBody{Error: ErrorDetail{Code: code, Message: msg, Field: field}})
}

// badParam is a RequestError about a query or path parameter.
func badParam(field, msg string) error {
	return &service.RequestError{Field: field, Err: errors.New(msg)}
}
