package server

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/service"
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

// Kinds of the HTTP layer's own errors, which never reach the service.
const (
	kindBodyTooLarge = "body-too-large"
	kindBodySlow     = "body-slow"
	kindUnauthorized = "unauthorized"
	kindForbidden    = "forbidden"
	kindMediaType    = "media-type"
	kindExtenderOff  = "extender-off"
	kindNoRoute      = "no-route"
	kindNoMethod     = "no-method"
)

// httpKind is the kind of err when it is an error of the HTTP layer
// itself.
func httpKind(err error) (string, bool) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return kindBodyTooLarge, true
	}
	for _, r := range []struct {
		kind string
		errs []error
	}{
		{kindBodySlow, []error{errBodySlow}},
		{kindUnauthorized, []error{errUnauthorized}},
		{kindForbidden, []error{errForbidden, errCrossSite, errWritesLocal, errHost}},
		{kindMediaType, []error{errMediaType}},
		{kindExtenderOff, []error{errExtenderOff}},
		{kindNoRoute, []error{errNoRoute}},
		{kindNoMethod, []error{errNoMethod}},
	} {
		for _, s := range r.errs {
			if errors.Is(err, s) {
				return r.kind, true
			}
		}
	}
	return "", false
}

// answer is the HTTP status and the stable code of a kind of error.
type answer struct {
	status int
	code   string
}

// answers is the one table from kinds (the HTTP layer's and
// service.Kinds) to statuses: the only place where statuses are chosen
// for errors.
func answers() map[string]answer {
	return map[string]answer{
		kindBodyTooLarge: {http.StatusRequestEntityTooLarge, "body_too_large"},
		kindBodySlow:     {http.StatusRequestTimeout, "body_timeout"},
		kindUnauthorized: {http.StatusUnauthorized, "unauthorized"},
		kindForbidden:    {http.StatusForbidden, "forbidden"},
		kindMediaType:    {http.StatusUnsupportedMediaType, "unsupported_media_type"},
		kindExtenderOff:  {http.StatusNotFound, "extender_off"},
		kindNoRoute:      {http.StatusNotFound, "no_route"},
		kindNoMethod:     {http.StatusMethodNotAllowed, "method_not_allowed"},

		service.KindStoreFull:        {http.StatusInsufficientStorage, "store_full"},
		service.KindStoreReadOnly:    {http.StatusServiceUnavailable, "store_read_only"},
		service.KindStoreUnavailable: {http.StatusServiceUnavailable, "store_unavailable"},
		service.KindNotFound:         {http.StatusNotFound, "not_found"},
		service.KindNotPending:       {http.StatusConflict, "not_pending"},
		service.KindShrinkRefused:    {http.StatusConflict, "shrink_guard"},
		service.KindBusy:             {http.StatusTooManyRequests, "busy"},
		service.KindDisabled:         {http.StatusForbidden, "disabled"},
		service.KindDiscoveryFailing: {http.StatusServiceUnavailable, "discovery_failing"},
		service.KindNoTopology:       {http.StatusServiceUnavailable, "no_topology"},
		service.KindInterrupted:      {http.StatusServiceUnavailable, "interrupted"},
		service.KindCanceled:         {http.StatusServiceUnavailable, "shutting_down"},
		service.KindOperatorOnly:     {http.StatusForbidden, "operator_only"},
		service.KindUnknownPlugin:    {http.StatusBadRequest, "unknown_plugin"},
		service.KindInexpressible:    {http.StatusUnprocessableEntity, "inexpressible"},
		service.KindUnknownAccount:   {http.StatusNotFound, "unknown_account"},
		service.KindNoCandidate:      {http.StatusUnprocessableEntity, "no_candidate"},
		service.KindInvalid:          {http.StatusBadRequest, "invalid_request"},
		service.KindNoCredentials:    {http.StatusBadRequest, "no_credentials"},
		service.KindAuth:             {http.StatusForbidden, "provider_auth"},
		service.KindUnavailable:      {http.StatusBadGateway, "upstream_unavailable"},
		service.KindTimeout:          {http.StatusGatewayTimeout, "timeout"},
		service.KindInternal:         {http.StatusInternalServerError, "internal"},
	}
}

// kindOf is the kind of err: the HTTP layer's own, else the service's.
func kindOf(err error) string {
	if kind, ok := httpKind(err); ok {
		return kind
	}
	return service.KindOf(err)
}

// statusOf maps an error to its HTTP status and code: a simulated
// failure answers the status it asked for, any other error the status of
// its kind.
func statusOf(err error) (int, string) {
	var simulated *service.SimulatedError
	if errors.As(err, &simulated) {
		return simulated.Code, "simulated" // the status the request asked Topograph's test provider for
	}
	a, ok := answers()[kindOf(err)]
	if !ok {
		return http.StatusInternalServerError, "internal"
	}
	return a.status, a.code
}

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
	msg := err.Error()
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
	c.AbortWithStatusJSON(status, ErrorBody{Error: ErrorDetail{Code: code, Message: msg, Field: service.FieldOf(err)}})
}

// badParam is a RequestError about a query or path parameter.
func badParam(field, msg string) error {
	return &service.RequestError{Field: field, Err: errors.New(msg)}
}
