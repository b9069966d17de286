package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service/store"
)

// Sentinel errors. KindOf gives each (and the plugins', the store's and
// placement's) a kind, and the server a status to each kind.
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

// Error kinds: the class of an error, stored with a failed result so
// that its error can be rebuilt (and answered with the same status) after
// a restart. The server chooses a status for each; nothing here knows
// about HTTP. Stored names never change meaning.
const (
	KindInvalid          = "invalid"
	KindNoCredentials    = "no-credentials"
	KindAuth             = "auth"
	KindShrinkRefused    = "shrink-refused"
	KindInexpressible    = "inexpressible"
	KindUnavailable      = "unavailable"
	KindTimeout          = "timeout"
	KindCanceled         = "canceled"
	KindInterrupted      = "interrupted"
	KindInternal         = "internal"
	KindStoreFull        = "store-full"
	KindStoreReadOnly    = "store-read-only"
	KindStoreUnavailable = "store-unavailable"
	KindNotFound         = "not-found"
	KindNotPending       = "not-pending"
	KindBusy             = "busy"
	KindDisabled         = "disabled"
	KindDiscoveryFailing = "discovery-failing"
	KindNoTopology       = "no-topology"
	KindOperatorOnly     = "operator-only"
	KindUnknownPlugin    = "unknown-plugin"
	KindUnknownAccount   = "unknown-account"
	KindNoCandidate      = "no-candidate"
)

// kindRule gives kind to an error that wraps any of errs; errs[0] is the
// cause ResultError rebuilds for the kind (from its first rule).
type kindRule struct {
	kind string
	errs []error
}

// kindRules is the one table from sentinel errors to kinds. Order is
// precedence: an error wrapping several sentinels takes the kind of the
// first rule it matches (a configuration error that the target cannot
// express is inexpressible before it is invalid).
func kindRules() []kindRule {
	return []kindRule{
		{KindStoreFull, []error{store.ErrFull}},
		{KindStoreReadOnly, []error{store.ErrReadOnly}},
		{KindStoreUnavailable, []error{store.ErrUnavailable}},
		{KindNotFound, []error{store.ErrNotFound}},
		{KindNotPending, []error{store.ErrNotPending}},
		{KindShrinkRefused, []error{ErrShrinkRefused}},
		{KindBusy, []error{ErrBusy}},
		{KindDisabled, []error{ErrDisabled}},
		{KindDiscoveryFailing, []error{ErrDiscoveryFailing}},
		{KindNoTopology, []error{ErrNoTopology}},
		{KindInterrupted, []error{ErrInterrupted}},
		{KindCanceled, []error{ErrClosed, context.Canceled}},
		{KindOperatorOnly, []error{config.ErrOperatorOnly, ErrNotConfigured}},
		{KindUnknownPlugin, []error{plugins.ErrUnknownPlugin}},
		{KindInexpressible, []error{engines.ErrInexpressible}},
		{KindNotFound, []error{placement.ErrNoRecord}},
		{KindUnknownAccount, []error{placement.ErrUnknownAccount}},
		{KindNoCandidate, []error{placement.ErrNoCandidate}},
		{KindInvalid, []error{ErrBadRequest, placement.ErrInvalid, config.ErrInvalid}},
		{KindNoCredentials, []error{providers.ErrNoCredentials}},
		{KindAuth, []error{providers.ErrAuth}},
		{KindUnavailable, []error{providers.ErrUnavailable}},
		{KindTimeout, []error{context.DeadlineExceeded}},
		{KindInternal, []error{ErrInternal}},
	}
}

// Kinds returns every kind KindOf gives, in the order of its table; a
// SimulatedError's kind (its status) is the one kind not listed.
func Kinds() []string {
	var out []string
	for _, r := range kindRules() {
		if !slices.Contains(out, r.kind) {
			out = append(out, r.kind)
		}
	}
	return out
}

// KindOf classifies err: the kind of the first rule of the table it
// matches, KindInternal when none does, and a SimulatedError's own kind.
func KindOf(err error) string {
	if kind, ok := simulatedKind(err); ok {
		return kind
	}
	for _, r := range kindRules() {
		for _, s := range r.errs {
			if errors.Is(err, s) {
				return r.kind
			}
		}
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
	cause := ErrInternal // a kind this build does not know
	for _, rule := range kindRules() {
		if rule.kind == r.ErrKind {
			cause = rule.errs[0]
			break
		}
	}
	return &storedError{msg: r.ErrMessage, field: r.ErrField, cause: cause}
}

type storedError struct {
	msg, field string
	cause      error
}

func (e *storedError) Error() string { return e.msg }
func (e *storedError) Unwrap() error { return e.cause }
