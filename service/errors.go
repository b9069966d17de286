package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service/store"
)

// Sentinel errors. The server maps them (and the plugins' and the
// store's) to HTTP statuses; nothing here knows about HTTP.
var (
	// ErrBadRequest is wrapped by every RequestError.
	ErrBadRequest = errors.New("bad request")
	// ErrBusy means too many requests are queued; retry later.
	ErrBusy = errors.New("too many requests in progress")
	// ErrInterrupted means the service restarted before a request
	// finished and could not resume it (its credentials are not stored).
	ErrInterrupted = errors.New("interrupted by a restart")
	// ErrDiscoveryFailing means discoveries keep failing: the topology
	// served is getting stale.
	ErrDiscoveryFailing = errors.New("discoveries keep failing")
	// ErrNoTopology means no topology has been accepted yet.
	ErrNoTopology = errors.New("no topology discovered yet")
	// ErrDisabled means the configuration turns the operation off.
	ErrDisabled = errors.New("disabled by configuration")
	// ErrNotConfigured means a request named a plugin the operator did
	// not configure where only a configured one may be used.
	ErrNotConfigured = errors.New("not configured by the operator")
	// ErrShrinkRefused means publishing a graph would lose more nodes or
	// switches than the shrink guard allows.
	ErrShrinkRefused = errors.New("refused by the shrink guard")
	// ErrClosed means the service is shutting down.
	ErrClosed = errors.New("shutting down")
	// ErrInternal is wrapped by a stored result whose error had no other
	// known cause.
	ErrInternal = errors.New("internal error")
)

// RequestError is a problem with one field of an API request.
type RequestError struct {
	// Field is the dotted path of the field, e.g. "provider.params.model";
	// "(body)" for the request as a whole.
	Field string
	// Err says what is wrong. It never quotes a credential.
	Err error
}

// Error implements error.
func (e *RequestError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap makes errors.Is match ErrBadRequest and the cause.
func (e *RequestError) Unwrap() []error { return []error{ErrBadRequest, e.Err} }

func badRequest(field, format string, args ...any) error {
	return &RequestError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Error kinds stored with a failed result, so that its error can be
// rebuilt (and mapped to the same status) after a restart.
const (
	KindInvalid       = "invalid"
	KindNoCredentials = "no-credentials"
	KindAuth          = "auth"
	KindShrinkRefused = "shrink-refused"
	KindInexpressible = "inexpressible"
	KindUnavailable   = "unavailable"
	KindTimeout       = "timeout"
	KindCanceled      = "canceled"
	KindInterrupted   = "interrupted"
	KindInternal      = "internal"
)

// KindOf classifies err for storage.
func KindOf(err error) string {
	if kind, ok := simulatedKind(err); ok {
		return kind
	}
	switch {
	case errors.Is(err, config.ErrInvalid), errors.Is(err, ErrBadRequest), errors.Is(err, plugins.ErrUnknownPlugin):
		return KindInvalid
	case errors.Is(err, engines.ErrInexpressible):
		return KindInexpressible
	case errors.Is(err, providers.ErrNoCredentials):
		return KindNoCredentials
	case errors.Is(err, providers.ErrAuth):
		return KindAuth
	case errors.Is(err, ErrShrinkRefused):
		return KindShrinkRefused
	case errors.Is(err, providers.ErrUnavailable):
		return KindUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, ErrInterrupted):
		return KindInterrupted
	case errors.Is(err, context.Canceled), errors.Is(err, ErrClosed):
		return KindCanceled
	}
	return KindInternal
}

// FieldOf returns the configuration or request field err is about, if any.
func FieldOf(err error) string {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Field
	}
	var fe *config.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	var se *storedError
	if errors.As(err, &se) {
		return se.field
	}
	return ""
}

// ResultError rebuilds the error of a failed result: it wraps the
// sentinel of its kind and carries its field.
func ResultError(r *store.Result) error {
	if se, ok := simulatedResult(r.ErrKind, r.ErrMessage); ok {
		return se
	}
	var cause error
	switch r.ErrKind {
	case KindInvalid:
		cause = ErrBadRequest
	case KindInexpressible:
		cause = engines.ErrInexpressible
	case KindNoCredentials:
		cause = providers.ErrNoCredentials
	case KindAuth:
		cause = providers.ErrAuth
	case KindShrinkRefused:
		cause = ErrShrinkRefused
	case KindUnavailable:
		cause = providers.ErrUnavailable
	case KindTimeout:
		cause = context.DeadlineExceeded
	case KindInterrupted:
		cause = ErrInterrupted
	case KindCanceled:
		cause = ErrClosed
	default:
		cause = ErrInternal
	}
	return &storedError{msg: r.ErrMessage, field: r.ErrField, cause: cause}
}

type storedError struct {
	msg, field string
	cause      error
}

func (e *storedError) Error() string { return e.msg }
func (e *storedError) Unwrap() error { return e.cause }
